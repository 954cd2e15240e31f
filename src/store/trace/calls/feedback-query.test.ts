import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestStore, type TestStore, testDialects } from "../../../testing/stores.js";
import type { Operation } from "../query/ast.js";
import { SqlTraceCallStore } from "../trace-store.js";
import { requiredFeedbackTypes } from "./feedback-query.js";
import type { CallWrite } from "./types.js";

const P = "e/feedback-filter";
const REACTION = "feedback.[wandb.reaction.1].payload.emoji";

describe("feedback types a query requires", () => {
  it("comes from comparisons with non-null literals in conjuncts only", () => {
    const eq = (field: string, literal: unknown): Operation => ({ $eq: [{ $getField: field }, { $literal: literal }] });
    expect(requiredFeedbackTypes(eq(REACTION, "👍"))).toEqual(["wandb.reaction.1"]);
    expect(requiredFeedbackTypes({ $and: [eq("op_name", "x"), { $gt: [{ $literal: 3 }, { $getField: "feedback.[score].payload.value" }] }] })).toEqual(["score"]);
    expect(requiredFeedbackTypes(eq(REACTION, null))).toEqual([]);
    expect(requiredFeedbackTypes({ $not: [eq(REACTION, "👍")] })).toEqual([]);
    expect(requiredFeedbackTypes({ $or: [eq(REACTION, "👍"), eq("op_name", "x")] })).toEqual([]);
    expect(requiredFeedbackTypes({ $in: [{ $getField: REACTION }, [{ $literal: "👍" }, { $literal: null }]] })).toEqual([]);
  });
});

describe.each(testDialects)("feedback and status filters on %s", (dialect) => {
  let store: TestStore;
  let indexed: SqlTraceCallStore;
  let scanning: SqlTraceCallStore;
  const ids = async (calls: SqlTraceCallStore, query: Operation, limit?: number) => {
    const out: string[] = [];
    for await (const page of calls.queryCalls({ projectId: P, query, columns: ["id"], limit, sortBy: [{ field: "started_at", direction: "desc" }] })) out.push(...page.map((call) => call.id));
    return out;
  };

  beforeAll(async () => {
    store = await openTestStore(dialect);
    indexed = new SqlTraceCallStore(store);
    scanning = new SqlTraceCallStore(store, { useLeafIndex: false, useTextIndex: false, useFeedbackIndex: false });
    const writes: CallWrite[] = [];
    for (let i = 0; i < 60; i++) {
      const id = `c${String(i).padStart(2, "0")}`;
      const startedAt = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString().replace("Z", "000Z");
      const start = {
        projectId: P,
        id,
        traceId: `t${i}`,
        opName: "op",
        displayName: null,
        parentId: null,
        threadId: null,
        turnId: null,
        startedAt,
        attributes: {},
        inputs: {},
        otelDump: null,
        wbUserId: "u",
        wbRunId: null,
        wbRunStep: null,
      };
      const summary = i % 9 === 0 ? { status_counts: { error: 1 } } : {};
      const end = { projectId: P, id, traceId: null, endedAt: "2024-06-01T00:00:00.000000Z", exception: i % 4 === 0 ? "boom" : null, output: null, summary, wbRunStepEnd: null };
      writes.push(i % 6 === 1 ? { start } : { start, end });
    }
    await indexed.writeCalls(writes);
    await indexed.deleteCalls(P, ["c08"]);
    const feedback = (id: string, n: number, emoji: string) => ({
      id: `f${n}`,
      project_id: P,
      weave_ref: `weave:///${P}/call/${id}`,
      wb_user_id: "u",
      created_at: new Date(Date.UTC(2024, 1, 1) + n * 1000).toISOString(),
      feedback_type: "wandb.reaction.1",
      payload: { emoji },
    });
    // c03 is liked then disliked: its newest reaction is 👎. c08 is deleted.
    await indexed.insertFeedback(
      [feedback("c01", 1, "👍"), feedback("c03", 2, "👍"), feedback("c03", 3, "👎"), feedback("c05", 4, "👍"), feedback("c08", 5, "👍"), feedback("c12", 6, "👎")].map((row) => ({
        ...row,
        creator: null,
        annotation_ref: null,
        runnable_ref: null,
        call_ref: null,
        trigger_ref: null,
        queue_id: null,
        scorer_tags: [],
        scorer_tag_reasons: {},
        scorer_tag_confidences: {},
        scorer_ratings: {},
        scorer_rating_reasons: {},
        scorer_rating_confidences: {},
        span_agent_name: "",
        span_agent_version: "",
        span_status_code: "",
        span_conversation_id: "",
        span_trace_id: "",
        scorer_trace_id: "",
      })),
    );
  });
  afterAll(async () => {
    await store.close();
  });

  it("returns what reading every call returns", async () => {
    const reaction = (emoji: unknown): Operation => ({ $eq: [{ $getField: REACTION }, { $literal: emoji }] });
    const status = (value: string): Operation => ({ $eq: [{ $getField: "summary.weave.status" }, { $literal: value }] });
    const queries: Operation[] = [
      reaction("👍"),
      reaction("👎"),
      reaction(null),
      { $not: [reaction("👍")] },
      { $and: [reaction("👍"), status("success")] },
      ...["error", "running", "success", "descendant_error", "other"].map(status),
      { $eq: [{ $literal: "error" }, { $getField: "summary.weave.status" }] },
      { $not: [status("error")] },
      { $in: [{ $getField: "summary.weave.status" }, [{ $literal: "error" }, { $literal: "running" }]] },
    ];
    for (const query of queries) {
      expect(await ids(indexed, query), JSON.stringify(query)).toEqual(await ids(scanning, query));
      expect(await ids(indexed, query, 2), JSON.stringify(query)).toEqual(await ids(scanning, query, 2));
      expect(await indexed.countCalls({ projectId: P, query })).toEqual(await scanning.countCalls({ projectId: P, query }));
    }
    expect(await ids(indexed, reaction("👍"))).toEqual(["c05", "c01"]);
    // The status conditions that indexes serve select what the status expression itself does.
    for (const value of ["error", "running"]) {
      const viaExpression: Operation = { $eq: [{ $convert: { input: { $getField: "summary.weave.status" }, to: "string" } }, { $literal: value }] };
      expect(await ids(indexed, status(value))).toEqual(await ids(indexed, viaExpression));
      expect((await ids(indexed, status(value))).length).toBeGreaterThan(3);
    }
  });
});
