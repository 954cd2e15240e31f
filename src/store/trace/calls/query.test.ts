import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestStore, type TestStore, testDialects } from "../../../testing/stores.js";
import type { SortBy } from "../query/ast.js";
import { SqlTraceCallStore } from "../trace-store.js";
import type { CallsQuery, CallWrite } from "./types.js";

const P = "e/sorted";

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x100000000;
  };
}

/**
 * A query in an order other than (started_at, id) reads its ids in that order first, then its rows
 * by id (past one page). Its answer must be exactly what reading it in windows of at most 100 rows,
 * each one ordered query, gives: the same calls, in the same order, with the same content.
 */
describe.each(testDialects)("calls in a non-default order on %s", (dialect) => {
  let store: TestStore;
  let calls: SqlTraceCallStore;

  beforeAll(async () => {
    store = await openTestStore(dialect);
    calls = new SqlTraceCallStore(store);
    const next = random(11);
    const writes: CallWrite[] = [];
    for (const project of [P, "e/other"]) {
      for (let i = 0; i < 330; i++) {
        const id = `c${String(i).padStart(3, "0")}`;
        const startedAt = new Date(Date.UTC(2024, 0, 1) + Math.floor(next() * 50) * 1000).toISOString().replace("Z", "000Z");
        const n = next() < 0.1 ? null : next() < 0.2 ? `text ${Math.floor(next() * 5)}` : Math.floor(next() * 40);
        const start = {
          projectId: project,
          id,
          traceId: `t${i}`,
          opName: `weave:///${project}/op/${["a", "b", "c"][Math.floor(next() * 3)]}:v0`,
          displayName: null,
          parentId: null,
          threadId: null,
          turnId: null,
          startedAt,
          attributes: {},
          inputs: n === null ? {} : { n },
          otelDump: null,
          wbUserId: "u",
          wbRunId: null,
          wbRunStep: null,
        };
        writes.push(next() < 0.8 ? { start, end: { projectId: project, id, traceId: null, endedAt: "2024-06-01T00:00:00.000000Z", exception: null, output: { i }, summary: {}, wbRunStepEnd: null } } : { start });
      }
    }
    await calls.writeCalls(writes);
    await calls.deleteCalls(P, ["c007", "c150"]);
  });
  afterAll(async () => {
    await store?.close();
  });

  const read = async (q: CallsQuery) => {
    const out: unknown[] = [];
    for await (const page of calls.queryCalls(q)) out.push(...page);
    return out;
  };
  /** The same range read as windows of at most 100 rows, each a query of its own. */
  const inWindows = async (q: CallsQuery) => {
    const out: unknown[] = [];
    for (let offset = q.offset ?? 0, left = q.limit ?? Infinity; left > 0; ) {
      const limit = Math.min(100, left);
      const window = await read({ ...q, offset, limit });
      out.push(...window);
      if (window.length < limit) break;
      offset += limit;
      left -= limit;
    }
    return out;
  };

  const orders: [string, SortBy[]][] = [
    ["op_name descending", [{ field: "op_name", direction: "desc" }]],
    ["a JSON input ascending (numbers, strings, missing)", [{ field: "inputs.n", direction: "asc" }]],
    [
      "two keys",
      [
        { field: "inputs.n", direction: "desc" },
        { field: "ended_at", direction: "asc" },
      ],
    ],
  ];
  it.each(orders)("reads %s as its windows do", async (_name, sortBy) => {
    for (const range of [{}, { limit: 250, offset: 17 }, { offset: 120 }, { limit: 101 }]) {
      const q: CallsQuery = { projectId: P, sortBy, ...range };
      const whole = await read(q);
      expect(whole.length).toBeGreaterThan(100);
      expect(whole).toEqual(await inWindows(q));
    }
    const filtered: CallsQuery = { projectId: P, sortBy, columns: ["inputs"], query: { $eq: [{ $getField: "op_name" }, { $literal: `weave:///${P}/op/b:v0` }] } };
    expect(await read(filtered)).toEqual(await inWindows(filtered));
  });

  it("reads a query with no order in id order, as its pages were read before", async () => {
    const ids = (await read({ projectId: P, sortBy: [] })).map((call) => (call as { id: string }).id);
    expect(ids).toHaveLength(328);
    expect(ids).toEqual([...ids].sort());
  });
});
