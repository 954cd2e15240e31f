import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillNumbers } from "../../migrations/011-trace-call-numbers.js";
import { openTestStore, type TestStore, testDialects } from "../../../testing/stores.js";
import type { Operation } from "../query/ast.js";
import { traceDb } from "../call-tables.js";
import { SqlTraceCallStore } from "../trace-store.js";
import { MAX_CANDIDATES_FOR_PAGE } from "./leaf-query.js";
import { MAX_NUMBERS_PER_COLUMN, numberLeaves, numberOverflowKey, numberPathKey } from "./number-leaves.js";
import { indexedIntervalSets, rangeCandidates, rangeSample } from "./range-query.js";
import type { CallEnd, CallStart, CallWrite } from "./types.js";

const P = "e/ranges";

/** A small deterministic generator, so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

/** Leaves that the databases read as numbers in interesting ways, and some they do not. */
const SCALARS: unknown[] = [
  5,
  0,
  -0,
  100,
  0.1 + 0.2,
  0.3,
  -7.25,
  1e21,
  5e-324,
  1e-310,
  2 ** 53 + 2,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  123456789.12345679,
  "5",
  " 5 ",
  "\t7\n",
  "5.0",
  "05",
  "-0",
  "1e2",
  "1E+2",
  "1e999",
  "-1e999",
  "1e-999",
  "+5",
  ".5",
  "5.",
  "0x10",
  "Infinity",
  "NaN",
  "12345678901234567890123",
  "0.30000000000000004",
  "abc",
  "",
  true,
  false,
  null,
];
const KEYS = ["n", "deep", "x", "m"];

function randomValue(next: () => number, depth: number): unknown {
  const roll = next();
  if (depth < 3 && roll < 0.2) return randomObject(next, depth + 1);
  if (depth < 3 && roll < 0.27) return [SCALARS[Math.floor(next() * SCALARS.length)], { n: 5 }];
  return SCALARS[Math.floor(next() * SCALARS.length)];
}

function randomObject(next: () => number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const size = Math.floor(next() * 4);
  for (let i = 0; i < size; i++) out[KEYS[Math.floor(next() * KEYS.length)]!] = randomValue(next, depth);
  return out;
}

/** Bounds next to the leaves above, so ties and the last place of a double are exercised. */
const BOUNDS: unknown[] = [5, 0, -0, 4.999999999999999, 5.000000000000001, 0.3, 0.30000000000000004, 100, 99.99999999999999, -7.25, 1e21, 1e-310, 5e-324, 1e308, -1e308, 2 ** 53, 1.2345678912345679e8, "5", "100", true, null];

const FIELDS = ["inputs.n", "inputs.deep.n", "inputs.deep.deep.n", "inputs.x.0", "inputs.m", "attributes.n", "summary.n", "summary.deep.m", "output", "output.n", "inputs.missing", "inputs.k70"];
const OPERATORS = ["$gt", "$gte", "$lt", "$lte"] as const;

function randomRange(next: () => number): Operation {
  const field = { $getField: FIELDS[Math.floor(next() * FIELDS.length)]! };
  const bound = { $literal: BOUNDS[Math.floor(next() * BOUNDS.length)] };
  const op = OPERATORS[Math.floor(next() * OPERATORS.length)]!;
  return (next() < 0.7 ? { [op]: [field, bound] } : { [op]: [bound, field] }) as Operation;
}

function randomOperation(next: () => number, depth = 0): Operation {
  const roll = next();
  if (depth < 2 && roll < 0.25) return { $and: [randomOperation(next, depth + 1), randomOperation(next, depth + 1)] };
  if (depth < 2 && roll < 0.35) return { $or: [randomOperation(next, depth + 1), randomOperation(next, depth + 1)] };
  if (depth < 2 && roll < 0.4) return { $not: [randomOperation(next, depth + 1)] };
  return randomRange(next);
}

function callStart(id: string, seconds: number, inputs: Record<string, unknown>, attributes: Record<string, unknown>): CallStart {
  const startedAt = new Date(Date.UTC(2024, 0, 1) + seconds * 1000).toISOString().replace("Z", "000Z");
  return { projectId: P, id, traceId: `t-${id}`, opName: "op", displayName: null, parentId: null, threadId: null, turnId: null, startedAt, attributes, inputs, otelDump: null, wbUserId: "u", wbRunId: null, wbRunStep: null };
}

function callEnd(id: string, output: unknown, summary: Record<string, unknown>): CallEnd {
  return { projectId: P, id, traceId: null, endedAt: "2024-06-01T00:00:00.000000Z", exception: null, output, summary, wbRunStepEnd: null };
}

describe("numeric leaves", () => {
  it("reads numbers and the strings that spell one, not in lists, with an overflow row past the limit", () => {
    expect(numberLeaves("inputs", { a: 1, b: " 2 ", c: true, d: null, e: "x", list: [3], deep: { f: "1e999" } })).toEqual([
      { pathKey: numberPathKey("inputs", ["a"]), value: 1 },
      { pathKey: numberPathKey("inputs", ["b"]), value: 2 },
      { pathKey: numberPathKey("inputs", ["deep", "f"]), value: Number.MAX_VALUE },
    ]);
    expect(numberLeaves("output", 5)).toEqual([{ pathKey: numberPathKey("output", []), value: 5 }]);
    const wide = Object.fromEntries(Array.from({ length: MAX_NUMBERS_PER_COLUMN + 5 }, (_, i) => [`k${i}`, i]));
    const leaves = numberLeaves("inputs", wide);
    expect(leaves).toHaveLength(MAX_NUMBERS_PER_COLUMN + 1);
    expect(leaves.at(-1)).toEqual({ pathKey: numberOverflowKey("inputs"), value: 0 });
  });

  it("makes one interval of a path's range conjuncts, and none of what it cannot serve", () => {
    const field = { $getField: "inputs.n" };
    const [set] = indexedIntervalSets({ $and: [{ $gt: [field, { $literal: 1 }] }, { $lte: [{ $literal: 5 }, field] }, { $lt: [field, { $literal: 9 }] }] });
    expect(set).toHaveLength(1);
    expect(set![0]!.low).toBeCloseTo(5, 9);
    expect(set![0]!.low).toBeLessThan(5);
    expect(set![0]!.high).toBeGreaterThan(9);
    expect(indexedIntervalSets({ $or: [{ $gt: [field, { $literal: 1 }] }, { $lt: [{ $getField: "summary.x" }, { $literal: 0 }] }] })[0]).toHaveLength(2);
    for (const operation of [
      { $gt: [field, { $literal: "5" }] },
      { $gt: [{ $getField: "inputs.list.0" }, { $literal: 5 }] },
      { $gt: [{ $getField: "summary.weave.latency_ms" }, { $literal: 5 }] },
      { $not: [{ $gt: [field, { $literal: 5 }] }] },
      { $or: [{ $gt: [field, { $literal: 1 }] }, { $eq: [field, { $literal: 0 }] }] },
    ] as Operation[]) {
      expect(indexedIntervalSets(operation), JSON.stringify(operation)).toEqual([]);
    }
  });
});

describe.each(testDialects)("range index on %s", (dialect) => {
  let store: TestStore;
  let indexed: SqlTraceCallStore;
  let scanning: SqlTraceCallStore;
  const ids = async (calls: SqlTraceCallStore, query: Operation, options: { limit?: number; desc?: boolean } = {}) => {
    const out: string[] = [];
    const sortBy = options.desc ? [{ field: "started_at", direction: "desc" as const }] : undefined;
    for await (const page of calls.queryCalls({ projectId: P, query, columns: ["id"], limit: options.limit, sortBy })) out.push(...page.map((call) => call.id));
    return out;
  };
  const numberRows = async (callId: string) => Number((await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM trace_call_numbers WHERE project_id = ${P} AND call_id = ${callId}`.execute(traceDb(store.db))).rows[0]!.n);

  beforeAll(async () => {
    store = await openTestStore(dialect);
    indexed = new SqlTraceCallStore(store);
    scanning = new SqlTraceCallStore(store, { useLeafIndex: false, useTextIndex: false, useFeedbackIndex: false, useRangeIndex: false });
    const next = random(17);
    const writes: CallWrite[] = [];
    for (let i = 0; i < 300; i++) {
      const id = `c${String(i).padStart(3, "0")}`;
      const start = callStart(id, i, randomObject(next, 0), randomObject(next, 0));
      const end = callEnd(id, next() < 0.3 ? randomValue(next, 3) : randomObject(next, 0), randomObject(next, 0));
      // Complete calls, starts alone, and ends that arrive before their starts.
      if (i % 5 === 0) writes.push({ start });
      else if (i % 7 === 0) {
        await indexed.writeCalls([{ end }]);
        writes.push({ start });
      } else writes.push({ start, end });
    }
    // A column past the limit: its later leaves are found through the overflow row.
    writes.push({ start: callStart("wide", 400, Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i])), {}) });
    // A start sent again with other inputs: the old rows stay, harmlessly.
    writes.push({ start: callStart("c001", 1, { n: 1e6 }, {}) });
    await indexed.writeCalls(writes);
    await indexed.deleteCalls(P, ["c002"]);
  });
  afterAll(async () => {
    await store.close();
  });

  it("returns exactly what reading every call returns, for random range filters", async () => {
    const next = random(19);
    let narrowed = 0;
    for (let i = 0; i < 300; i++) {
      const query = randomOperation(next);
      const label = JSON.stringify(query);
      expect(await ids(indexed, query), label).toEqual(await ids(scanning, query));
      if (i % 3 === 0) expect(await ids(indexed, query, { limit: 5, desc: true }), label).toEqual(await ids(scanning, query, { limit: 5, desc: true }));
      if (i % 3 === 1) expect(await indexed.countCalls({ projectId: P, query }, 10), label).toEqual(await scanning.countCalls({ projectId: P, query }, 10));
      if ((await rangeCandidates(traceDb(store.db), P, query, 10_000)) !== undefined) narrowed++;
    }
    // The comparison above only means something if the index narrowed many of the queries.
    expect(narrowed).toBeGreaterThan(150);
  });

  it("finds a leaf past a column's limit through its overflow row", async () => {
    const query: Operation = { $gte: [{ $getField: "inputs.k70" }, { $literal: 70 }] };
    expect(await rangeCandidates(traceDb(store.db), P, query, 100)).toContain("wide");
    expect(await ids(indexed, query)).toEqual(["wide"]);
  });

  it("deletes the rows of deleted calls and their descendants", async () => {
    const parent = callStart("parent", 500, { n: 3 }, {});
    const child = { ...callStart("child", 501, { n: 4 }, {}), parentId: "parent", traceId: parent.traceId };
    await indexed.writeCalls([{ start: parent, end: callEnd("parent", 1, { n: 2 }) }, { start: child }]);
    expect(await numberRows("parent")).toBe(3);
    expect(await numberRows("child")).toBe(1);
    expect(await indexed.deleteCalls(P, ["parent"])).toBe(2);
    expect(await numberRows("parent")).toBe(0);
    expect(await numberRows("child")).toBe(0);
    expect(await ids(indexed, { $gte: [{ $getField: "inputs.n" }, { $literal: 3 }] })).toEqual(await ids(scanning, { $gte: [{ $getField: "inputs.n" }, { $literal: 3 }] }));
  });

  it("takes a rare range's calls, walks a common one, and proves a capped count from a sample", async () => {
    const db = traceDb(store.db);
    const common = Array.from({ length: MAX_CANDIDATES_FOR_PAGE + 10 }, (_, i) => ({ start: callStart(`m${i}`, 1000 + i, { score: i, kind: i % 2 === 0 ? "even" : "odd" }, {}) }));
    await indexed.writeCalls(common);
    const rare: Operation = { $gt: [{ $getField: "inputs.score" }, { $literal: MAX_CANDIDATES_FOR_PAGE + 6.5 }] };
    // The call with an overflow row of inputs is a candidate of every range on inputs.
    expect((await rangeCandidates(db, P, rare, MAX_CANDIDATES_FOR_PAGE))?.sort()).toEqual([`m${MAX_CANDIDATES_FOR_PAGE + 7}`, `m${MAX_CANDIDATES_FOR_PAGE + 8}`, `m${MAX_CANDIDATES_FOR_PAGE + 9}`, "wide"]);
    const wide: Operation = { $gte: [{ $getField: "inputs.score" }, { $literal: 0 }] };
    expect(await rangeCandidates(db, P, wide, MAX_CANDIDATES_FOR_PAGE)).toBeUndefined();
    expect(await rangeSample(db, P, wide, 1001)).toHaveLength(1001);
    expect(await indexed.countCalls({ projectId: P, query: wide }, 1000)).toEqual({ count: 1000, hasMore: true });
    // Half the sample fails the other conjunct: the count walks the calls instead, with the same answer.
    const half: Operation = { $and: [wide, { $eq: [{ $getField: "inputs.kind" }, { $literal: "odd" }] }] };
    expect(await indexed.countCalls({ projectId: P, query: half }, 1500)).toEqual(await scanning.countCalls({ projectId: P, query: half }, 1500));
    expect(await indexed.countCalls({ projectId: P, query: wide })).toEqual(await scanning.countCalls({ projectId: P, query: wide }));
    expect(await ids(indexed, wide, { limit: 3, desc: true })).toEqual([`m${MAX_CANDIDATES_FOR_PAGE + 9}`, `m${MAX_CANDIDATES_FOR_PAGE + 8}`, `m${MAX_CANDIDATES_FOR_PAGE + 7}`]);
  });

  it("is rebuilt from the stored calls by the migration's fill", async () => {
    const db = traceDb(store.db);
    const before = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM trace_call_numbers`.execute(db);
    await sql`DELETE FROM trace_call_numbers`.execute(db);
    await fillNumbers(store.db);
    const after = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM trace_call_numbers`.execute(db);
    // The fill holds what calls store now; writes also kept the rows of replaced parts.
    expect(Number(after.rows[0]!.n)).toBeGreaterThan(2000);
    expect(Number(after.rows[0]!.n)).toBeLessThanOrEqual(Number(before.rows[0]!.n));
    const next = random(23);
    for (let i = 0; i < 60; i++) {
      const query = randomOperation(next);
      expect(await ids(indexed, query), JSON.stringify(query)).toEqual(await ids(scanning, query));
    }
  });
});
