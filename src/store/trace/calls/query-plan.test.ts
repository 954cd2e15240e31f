import { CompiledQuery } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { traceSql } from "../../dialect.js";
import { openTestStore, type TestStore } from "../../../testing/stores.js";
import type { Operation } from "../query/ast.js";
import { traceDb } from "../call-tables.js";
import { SqlTraceCallStore } from "../trace-store.js";
import { countStatement } from "./query.js";
import type { CallsQuery, CallWrite } from "./types.js";

const P = "e/plans";
const failed: Operation = { $eq: [{ $getField: "summary.weave.status" }, { $literal: "error" }] };

/** SQLite's plan of a capped count, one line per step. */
async function countPlan(store: TestStore, q: CallsQuery): Promise<string> {
  const db = traceDb(store.db);
  const compiled = countStatement(traceSql("sqlite"), q, 1000).compile(db);
  const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${compiled.sql}`, [...compiled.parameters]));
  return plan.rows.map((row) => row.detail).join("\n");
}

/** Which index SQLite walks for the UI's filters (PostgreSQL's planner is left to itself). */
describe("calls query plans on sqlite", () => {
  let store: TestStore;
  let calls: SqlTraceCallStore;

  beforeAll(async () => {
    store = await openTestStore("sqlite");
    calls = new SqlTraceCallStore(store);
    // Traces of five calls (a root and four children); one call in 50 fails, all of them roots.
    const writes: CallWrite[] = [];
    for (let n = 0; n < 5000; n++) {
      const id = `c${String(n).padStart(5, "0")}`;
      const root = `c${String(n - (n % 5)).padStart(5, "0")}`;
      const startedAt = new Date(Date.UTC(2024, 0, 1) + n * 10).toISOString().replace("Z", "000Z");
      writes.push({
        start: {
          projectId: P,
          id,
          traceId: `t${Math.floor(n / 5)}`,
          opName: `weave:///${P}/op/${n % 5 === 0 ? "pipeline" : "chat"}:v0`,
          displayName: null,
          parentId: n % 5 === 0 ? null : root,
          threadId: null,
          turnId: null,
          startedAt,
          attributes: {},
          inputs: { n },
          otelDump: null,
          wbUserId: "u",
          wbRunId: null,
          wbRunStep: null,
        },
        end: { projectId: P, id, traceId: null, endedAt: startedAt, exception: n % 50 === 0 ? "Error: failed" : null, output: null, summary: {}, wbRunStepEnd: null },
      });
    }
    await calls.writeCalls(writes);
  });
  afterAll(async () => {
    await store.close();
  });

  it("walks the failed calls, not every root, for failed roots (with or without an op)", async () => {
    for (const filter of [{ trace_roots_only: true }, { trace_roots_only: true, op_names: [`weave:///${P}/op/pipeline:*`] }]) {
      for (const query of [failed, { $and: [failed, { $gte: [{ $getField: "started_at" }, { $literal: "2024-01-01T00:00:00Z" }] }] } as Operation]) {
        const q: CallsQuery = { projectId: P, filter, query };
        const plan = await countPlan(store, q);
        expect(plan, JSON.stringify(q)).toContain("trace_calls_failed");
        expect(plan).not.toContain("trace_calls_parent");
        expect(await calls.countCalls(q, 1000)).toEqual({ count: 100, hasMore: false });
      }
    }
  });

  it("still walks the roots for roots alone", async () => {
    const q: CallsQuery = { projectId: P, filter: { trace_roots_only: true } };
    expect(await countPlan(store, q)).toContain("trace_calls_parent");
    expect(await calls.countCalls(q, 500)).toEqual({ count: 500, hasMore: true });
  });
});
