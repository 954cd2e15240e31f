import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillLatencies, fillNumbers } from "../../migrations/012-trace-call-numbers-exact.js";
import { openTestStore, type TestStore, testDialects } from "../../../testing/stores.js";
import type { Operation } from "../query/ast.js";
import { traceDb } from "../call-tables.js";
import { SqlTraceCallStore } from "../trace-store.js";
import { MAX_CANDIDATES_FOR_PAGE } from "./leaf-query.js";
import { latencyPathKey, MAX_NUMBERS_PER_COLUMN, numberLeaves, numberOverflowKey, numberPathKey } from "./number-leaves.js";
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
      { pathKey: numberPathKey("inputs", ["a"]), value: 1, exact: true },
      { pathKey: numberPathKey("inputs", ["b"]), value: 2, exact: true },
      { pathKey: numberPathKey("inputs", ["deep", "f"]), value: Number.MAX_VALUE, exact: false },
    ]);
    expect(numberLeaves("output", 5)).toEqual([{ pathKey: numberPathKey("output", []), value: 5, exact: true }]);
    const wide = Object.fromEntries(Array.from({ length: MAX_NUMBERS_PER_COLUMN + 5 }, (_, i) => [`k${i}`, i]));
    const leaves = numberLeaves("inputs", wide);
    expect(leaves).toHaveLength(MAX_NUMBERS_PER_COLUMN + 1);
    expect(leaves.at(-1)).toEqual({ pathKey: numberOverflowKey("inputs"), value: 0, exact: false });
  });

  it("marks exact only the integers below 10^15 written as digits", () => {
    const exact = (value: unknown) => numberLeaves("inputs", { v: value })[0]?.exact;
    for (const value of [0, -0, 120, -3, 999_999_999_999_999, "120", " -7 ", "05"]) expect(exact(value), String(value)).toBe(true);
    for (const value of [0.5, 1e15, 2 ** 53, 1e21, "120.0", "1.2e2", "+5", "1000000000000000", "1e999"]) expect(exact(value), String(value)).toBe(false);
  });

  it("makes one interval of a path's range conjuncts, and none of what it cannot serve", () => {
    const field = { $getField: "inputs.n" };
    const [set] = indexedIntervalSets({ $and: [{ $gt: [field, { $literal: 1 }] }, { $lte: [{ $literal: 5 }, field] }, { $lt: [field, { $literal: 9 }] }, { $lte: [field, { $literal: 9 }] }] });
    expect(set).toHaveLength(1);
    // Exact rows meet the bounds as written (at equal bounds the strict one wins) ...
    expect(set![0]!.exact).toEqual({ low: 5, lowStrict: false, high: 9, highStrict: true });
    // ... the others widened ones, inclusive.
    expect(set![0]!.widened!.low).toBeCloseTo(5, 9);
    expect(set![0]!.widened!.low).toBeLessThan(5);
    expect(set![0]!.widened!.high).toBeGreaterThan(9);
    expect(set![0]!.widened!.highStrict).toBe(false);
    // A bound that is no safe integer is widened for exact rows too.
    const half = indexedIntervalSets({ $gt: [field, { $literal: 120.5 }] })[0]![0]!;
    expect(half.exact.low).toBeLessThan(120.5);
    expect(half.exact.lowStrict).toBe(false);
    // The latency: exact rows only, and only for a range that leaves out a running call's 0.
    const latency = { $getField: "summary.weave.latency_ms" };
    expect(indexedIntervalSets({ $gt: [latency, { $literal: 5 }] })).toEqual([[{ pathKey: latencyPathKey(), overflowKey: undefined, exact: { low: 5, lowStrict: true, high: undefined, highStrict: false }, widened: undefined }]]);
    expect(indexedIntervalSets({ $gt: [latency, { $literal: 0 }] })).toHaveLength(1);
    expect(indexedIntervalSets({ $lt: [latency, { $literal: 0 }] })).toHaveLength(1);
    expect(indexedIntervalSets({ $or: [{ $gt: [field, { $literal: 1 }] }, { $lt: [{ $getField: "summary.x" }, { $literal: 0 }] }] })[0]).toHaveLength(2);
    for (const operation of [
      { $gt: [field, { $literal: "5" }] },
      { $gt: [{ $getField: "inputs.list.0" }, { $literal: 5 }] },
      { $gte: [{ $getField: "summary.weave.latency_ms" }, { $literal: 0 }] },
      { $lt: [{ $getField: "summary.weave.latency_ms" }, { $literal: 5 }] },
      { $and: [{ $gt: [{ $getField: "summary.weave.latency_ms" }, { $literal: -1 }] }, { $lt: [{ $getField: "summary.weave.latency_ms" }, { $literal: 1 }] }] },
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
    // A leaf each of inputs, output and summary, and the latency of the ended call.
    expect(await numberRows("parent")).toBe(4);
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
    await fillLatencies(store.db, dialect === "postgres");
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

/** Values many calls hold exactly: integers (small, negative, near 10^15 and 2^53), floats, numeric strings. */
const COMMON: unknown[] = [120, 121, -3, -2, 0, -0, 0.5, 0.75, 999_999_999_999_999, 1e15, 2 ** 53, 2 ** 53 + 2, -1e15, "120", " 121 ", "120.0", "1.2e2", "-3", 119.99999999999999, 120.00000000000001];
/** Bounds at those values and a hair either side. */
const COMMON_BOUNDS: number[] = [120, 121, 120.5, 119.99999999999999, 120.00000000000001, -3, -2, -2.5, 0, 0.5, 0.75, 0.7499999999999999, 999_999_999_999_999, 1e15, 1e15 - 0.5, 2 ** 53, 2 ** 53 + 2, -1e15];

describe.each(testDialects)("range index at values many calls hold, on %s", (dialect) => {
  let store: TestStore;
  let indexed: SqlTraceCallStore;
  let scanning: SqlTraceCallStore;
  const ids = async (calls: SqlTraceCallStore, query: Operation, options: { limit?: number; desc?: boolean } = {}) => {
    const out: string[] = [];
    const sortBy = options.desc ? [{ field: "started_at", direction: "desc" as const }] : undefined;
    for await (const page of calls.queryCalls({ projectId: P, query, columns: ["id"], limit: options.limit, sortBy })) out.push(...page.map((call) => call.id));
    return out;
  };
  /** Call `i`'s latency in microseconds: whole milliseconds shared by many calls, and some in between. */
  const latencyMicros = (i: number) => (i % 4 === 3 ? 1000 * (i % 7) + 500 + (i % 3) : 1000 * (i % 7));

  beforeAll(async () => {
    store = await openTestStore(dialect);
    indexed = new SqlTraceCallStore(store);
    scanning = new SqlTraceCallStore(store, { useLeafIndex: false, useTextIndex: false, useFeedbackIndex: false, useRangeIndex: false });
    const writes: CallWrite[] = [];
    const lateEnds: CallWrite[] = [];
    for (let i = 0; i < 400; i++) {
      const id = `v${String(i).padStart(3, "0")}`;
      const start = callStart(id, i, { v: COMMON[i % COMMON.length], w: COMMON[(i * 7) % COMMON.length] }, {});
      const startMicros = Date.parse(start.startedAt.replace(/\d{3}Z$/, "Z")) * 1000 + (i % 5) * 100;
      start.startedAt = `${new Date(Math.floor(startMicros / 1000)).toISOString().slice(0, 23)}${String(startMicros % 1000).padStart(3, "0")}Z`;
      const endMicros = startMicros + latencyMicros(i);
      const end: CallEnd = { ...callEnd(id, null, {}), endedAt: `${new Date(Math.floor(endMicros / 1000)).toISOString().slice(0, 23)}${String(endMicros % 1000).padStart(3, "0")}Z` };
      // Complete calls, running ones (latency 0), ends that come before their starts and after them.
      if (i % 10 === 0) writes.push({ start });
      else if (i % 10 === 1) {
        await indexed.writeCalls([{ end }]);
        writes.push({ start });
      } else if (i % 10 === 2) {
        writes.push({ start });
        lateEnds.push({ end });
      } else writes.push({ start, end });
    }
    await indexed.writeCalls(writes);
    await indexed.writeCalls(lateEnds);
    await indexed.deleteCalls(P, ["v005", "v013"]);
  });
  afterAll(async () => {
    await store.close();
  });

  it("answers strict and inclusive bounds at common values exactly as reading every call", async () => {
    for (const bound of COMMON_BOUNDS) {
      const field = { $getField: "inputs.v" };
      const queries: Operation[] = [
        ...OPERATORS.map((op) => ({ [op]: [field, { $literal: bound }] }) as Operation),
        { $and: [{ $gte: [field, { $literal: bound }] }, { $lt: [field, { $literal: bound + 1 }] }] },
        { $and: [{ $gt: [field, { $literal: bound }] }, { $gte: [{ $literal: bound + 1 }, field] }] },
      ];
      for (const query of queries) {
        const label = JSON.stringify(query);
        expect(await ids(indexed, query), label).toEqual(await ids(scanning, query));
        expect(await ids(indexed, query, { limit: 7, desc: true }), label).toEqual(await ids(scanning, query, { limit: 7, desc: true }));
        expect(await indexed.countCalls({ projectId: P, query }, 15), label).toEqual(await scanning.countCalls({ projectId: P, query }, 15));
      }
    }
  });

  it("reads only the calls at the bound's value for a strict bound on integers", async () => {
    const db = traceDb(store.db);
    const field = { $getField: "inputs.v" };
    const query: Operation = { $and: [{ $gte: [field, { $literal: 120 }] }, { $lt: [field, { $literal: 121 }] }] };
    const candidates = new Set(await rangeCandidates(db, P, query, 10_000));
    const matches = await ids(scanning, query);
    for (const id of matches) expect(candidates.has(id)).toBe(true);
    // The calls holding exactly 121 (a number, or a string of its digits) are no candidates; only
    // numerals that are not read exactly ("1.2e2", 120.00000000000001 ...) are still widened.
    const at121 = (await ids(scanning, { $eq: [field, { $literal: 121 }] })).filter((id) => !matches.includes(id));
    expect(at121.length).toBeGreaterThan(20);
    for (const id of at121) expect(candidates.has(id), id).toBe(false);
  });

  it("serves latency ranges from the latency rows, exactly as reading every call", async () => {
    const db = traceDb(store.db);
    const latency = { $getField: "summary.weave.latency_ms" };
    let served = 0;
    for (const bound of [-1, 0, 1, 2, 3, 3.5, 5, 6, 7, 1e15])
      for (const op of OPERATORS) {
        const query = { [op]: [latency, { $literal: bound }] } as Operation;
        const both: Operation = { $and: [query, { $lte: [latency, { $literal: bound + 2 }] }] };
        for (const q of [query, both]) {
          const label = JSON.stringify(q);
          expect(await ids(indexed, q), label).toEqual(await ids(scanning, q));
          expect(await ids(indexed, q, { limit: 5, desc: true }), label).toEqual(await ids(scanning, q, { limit: 5, desc: true }));
          expect(await indexed.countCalls({ projectId: P, query: q }, 20), label).toEqual(await scanning.countCalls({ projectId: P, query: q }, 20));
          if ((await rangeCandidates(db, P, q, 10_000)) !== undefined) served++;
        }
      }
    // The 40 of these 80 ranges that leave out a running call's 0.
    expect(served).toBe(40);
    // A strict bound at a latency many calls have takes none of them.
    const over3: Operation = { $gt: [latency, { $literal: 3 }] };
    const at3 = (await ids(scanning, { $eq: [latency, { $literal: 3 }] })).length;
    expect(at3).toBeGreaterThan(20);
    expect((await rangeCandidates(db, P, over3, 10_000))!.length).toBe((await ids(scanning, over3)).length);
  });

  it("drops a deleted call's latency row, and the migration's fill rebuilds the same rows", async () => {
    const db = traceDb(store.db);
    const latencyRows = async () =>
      (await sql<{ call_id: string; value: number }>`SELECT call_id, value FROM trace_call_numbers WHERE project_id = ${P} AND path_key = ${latencyPathKey()} ORDER BY call_id, value`.execute(db)).rows.map(
        (row) => `${row.call_id}:${Number(row.value)}`,
      );
    const before = await latencyRows();
    expect(before.some((row) => row.startsWith("v005:"))).toBe(false);
    expect(before.some((row) => row.startsWith("v004:"))).toBe(true);
    // Running calls have no row.
    expect(before.some((row) => row.startsWith("v010:"))).toBe(false);
    await sql`DELETE FROM trace_call_numbers`.execute(db);
    await fillNumbers(store.db);
    await fillLatencies(store.db, dialect === "postgres");
    expect(await latencyRows()).toEqual(before);
  });
});
