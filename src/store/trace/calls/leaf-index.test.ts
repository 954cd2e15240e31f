import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillLeaves } from "../../migrations/005-trace-call-leaves.js";
import { openTestStore, type TestStore, testDialects } from "../../../testing/stores.js";
import type { Operation } from "../query/ast.js";
import { traceDb } from "../call-tables.js";
import { SqlTraceCallStore } from "../trace-store.js";
import { leafCandidates, MAX_CANDIDATES_FOR_PAGE } from "./leaf-query.js";
import { leafKeys, literalKeys, MAX_KEYS_PER_COLUMN, MAX_TEXT_LENGTH, overflowKey } from "./leaf-keys.js";
import type { CallEnd, CallStart, CallWrite } from "./types.js";

const P = "e/leaves";

/** A small deterministic generator, so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

/** Scalars that the type-tolerant comparison treats in interesting ways. */
const SCALARS: unknown[] = [
  "a",
  "b",
  "A",
  "",
  " ",
  "5",
  " 5 ",
  "5.0",
  "05",
  "-0",
  "0",
  "1e2",
  "100",
  "true",
  "false",
  "null",
  "x.y",
  "é",
  "😀",
  5,
  0,
  -0,
  100,
  0.1 + 0.2,
  0.3,
  1e21,
  5e-324,
  2 ** 53 + 2,
  -7.25,
  true,
  false,
  null,
  "{}",
  "[1]",
  "a".repeat(MAX_TEXT_LENGTH),
  "b".repeat(MAX_TEXT_LENGTH + 1),
  `${" ".repeat(300)}7`,
];
const KEYS = ["model", "n", "flag", "a.b", "0", "deep", "x"];

function randomValue(next: () => number, depth: number): unknown {
  const roll = next();
  if (depth < 3 && roll < 0.2) return randomObject(next, depth + 1);
  if (depth < 3 && roll < 0.27) return [SCALARS[Math.floor(next() * SCALARS.length)], { model: "a" }];
  return SCALARS[Math.floor(next() * SCALARS.length)];
}

function randomObject(next: () => number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const size = Math.floor(next() * 4);
  for (let i = 0; i < size; i++) out[KEYS[Math.floor(next() * KEYS.length)]!] = randomValue(next, depth);
  return out;
}

function randomLiteral(next: () => number): unknown {
  return next() < 0.9 ? SCALARS[Math.floor(next() * SCALARS.length)] : { model: "a" };
}

const FIELDS = [
  "inputs.model",
  "inputs.n",
  "inputs.flag",
  "inputs.deep.model",
  "inputs.deep.n",
  "inputs.0",
  "inputs.x.0",
  "attributes.model",
  "attributes.deep.x",
  "summary.n",
  "summary.deep.flag",
  "output",
  "output.model",
  "output.n",
  "inputs.missing",
];

function randomOperation(next: () => number, depth = 0): Operation {
  const field = { $getField: FIELDS[Math.floor(next() * FIELDS.length)]! };
  const roll = next();
  if (depth < 2 && roll < 0.15) return { $and: [randomOperation(next, depth + 1), randomOperation(next, depth + 1)] };
  if (depth < 2 && roll < 0.3) return { $or: [randomOperation(next, depth + 1), randomOperation(next, depth + 1)] };
  if (depth < 2 && roll < 0.37) return { $not: [randomOperation(next, depth + 1)] };
  if (roll < 0.55) return { $in: [field, [{ $literal: randomLiteral(next) }, { $literal: randomLiteral(next) }]] };
  return next() < 0.5 ? { $eq: [field, { $literal: randomLiteral(next) }] } : { $eq: [{ $literal: randomLiteral(next) }, field] };
}

function callStart(id: string, seconds: number, inputs: Record<string, unknown>, attributes: Record<string, unknown>): CallStart {
  const startedAt = new Date(Date.UTC(2024, 0, 1) + seconds * 1000).toISOString().replace("Z", "000Z");
  return { projectId: P, id, traceId: `t-${id}`, opName: "op", displayName: null, parentId: null, threadId: null, turnId: null, startedAt, attributes, inputs, otelDump: null, wbUserId: "u", wbRunId: null, wbRunStep: null };
}

function callEnd(id: string, output: unknown, summary: Record<string, unknown>): CallEnd {
  return { projectId: P, id, traceId: null, endedAt: "2024-06-01T00:00:00.000000Z", exception: null, output, summary, wbRunStepEnd: null };
}

describe("leaf keys", () => {
  it("keys scalar leaves of objects, not of lists, with an overflow key past the limit", () => {
    expect(leafKeys(P, "inputs", { a: "x", b: 1, c: true, d: null, list: ["x", 1] })).toHaveLength(3);
    expect(leafKeys(P, "inputs", { n: "5" })).toHaveLength(2);
    expect(leafKeys(P, "inputs", { long: "x".repeat(MAX_TEXT_LENGTH + 1) })).toHaveLength(0);
    const wide = Object.fromEntries(Array.from({ length: MAX_KEYS_PER_COLUMN + 5 }, (_, i) => [`k${i}`, i]));
    const keys = leafKeys(P, "inputs", wide);
    expect(keys).toHaveLength(MAX_KEYS_PER_COLUMN + 1);
    expect(keys.at(-1)).toBe(overflowKey(P, "inputs"));
  });

  it("keys a literal as the leaves it can equal, or not at all", () => {
    expect(literalKeys(P, "inputs", ["model"], "x")).toContain(leafKeys(P, "inputs", { model: "x" })[0]);
    expect(literalKeys(P, "inputs", ["n"], "5")).toContain(leafKeys(P, "inputs", { n: 5 })[0]);
    expect(literalKeys(P, "inputs", ["n"], 5)).toContain(leafKeys(P, "inputs", { n: " 5.0 " })[1]);
    expect(literalKeys(P, "inputs", ["flag"], true)).toContain(leafKeys(P, "inputs", { flag: "true" })[0]);
    for (const literal of [null, { a: 1 }, "{}", "[1]", "x".repeat(MAX_TEXT_LENGTH + 1), Number.POSITIVE_INFINITY, 5e-324, "\uD800"]) {
      expect(literalKeys(P, "inputs", ["n"], literal), JSON.stringify(literal)).toBeUndefined();
    }
    expect(literalKeys(P, "inputs", ["list", "0"], "x")).toBeUndefined();
  });
});

describe.each(testDialects)("leaf index on %s", (dialect) => {
  let store: TestStore;
  let indexed: SqlTraceCallStore;
  let scanning: SqlTraceCallStore;
  const ids = async (calls: SqlTraceCallStore, query: Operation) => {
    const out: string[] = [];
    for await (const page of calls.queryCalls({ projectId: P, query, columns: ["id"] })) out.push(...page.map((call) => call.id));
    return out;
  };

  beforeAll(async () => {
    store = await openTestStore(dialect);
    indexed = new SqlTraceCallStore(store);
    scanning = new SqlTraceCallStore(store, { useLeafIndex: false });
    const next = random(7);
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
    // A start sent again with other inputs: the old entries stay, harmlessly.
    writes.push({ start: callStart("c001", 1, { model: "replaced" }, {}) });
    await indexed.writeCalls(writes);
    await indexed.deleteCalls(P, ["c002"]);
  });
  afterAll(async () => {
    await store.close();
  });

  it("returns exactly what reading every call returns, for random filters", async () => {
    const next = random(11);
    let narrowed = 0;
    for (let i = 0; i < 300; i++) {
      const query = randomOperation(next);
      const expected = await ids(scanning, query);
      expect(await ids(indexed, query), JSON.stringify(query)).toEqual(expected);
      if ((await leafCandidates(traceDb(store.db), dialect, P, query)) !== undefined) narrowed++;
    }
    // The comparison above only means something if the index narrowed many of the queries.
    expect(narrowed).toBeGreaterThan(100);
  });

  it("finds a rare value among many calls, and gives up on a common one", async () => {
    const query: Operation = { $eq: [{ $getField: "inputs.model" }, { $literal: "replaced" }] };
    expect(await leafCandidates(traceDb(store.db), dialect, P, query)).toEqual(["c001"]);
    expect(await ids(indexed, query)).toEqual(["c001"]);
    const common = Array.from({ length: MAX_CANDIDATES_FOR_PAGE + 1 }, (_, i) => ({ start: callStart(`m${i}`, 1000 + i, { model: "common" }, {}) }));
    await indexed.writeCalls(common);
    const commonQuery: Operation = { $eq: [{ $getField: "inputs.model" }, { $literal: "common" }] };
    // Too many for a page: the query reads the calls in order; a count still takes them.
    expect(await leafCandidates(traceDb(store.db), dialect, P, commonQuery, MAX_CANDIDATES_FOR_PAGE)).toBeUndefined();
    expect(await leafCandidates(traceDb(store.db), dialect, P, commonQuery)).toHaveLength(MAX_CANDIDATES_FOR_PAGE + 1);
    const page = await indexed.queryCalls({ projectId: P, query: commonQuery, limit: 3, columns: ["id"] }).next();
    expect((page.value as { id: string }[]).map((call) => call.id)).toEqual(["m0", "m1", "m2"]);
    expect(await indexed.countCalls({ projectId: P, query: commonQuery })).toEqual({ count: MAX_CANDIDATES_FOR_PAGE + 1, hasMore: false });
    expect((await indexed.countCalls({ projectId: P, query: { $eq: [{ $getField: "inputs.model" }, { $literal: "absent" }] } })).count).toBe(0);
  });

  it("is rebuilt from the stored calls by the migration's fill", async () => {
    const db = traceDb(store.db);
    const table = dialect === "sqlite" ? "trace_call_terms" : "trace_call_leaves";
    // A contentless FTS5 table is emptied with its 'delete-all' command.
    await (dialect === "sqlite" ? sql`INSERT INTO trace_call_terms (trace_call_terms) VALUES ('delete-all')` : sql`DELETE FROM trace_call_leaves`).execute(db);
    await fillLeaves(store.db);
    const after = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${sql.table(table)}`.execute(db);
    expect(Number(after.rows[0]!.n)).toBeGreaterThan(100);
    const next = random(13);
    for (let i = 0; i < 60; i++) {
      const query = randomOperation(next);
      expect(await ids(new SqlTraceCallStore(store), query), JSON.stringify(query)).toEqual(await ids(scanning, query));
    }
  });
});
