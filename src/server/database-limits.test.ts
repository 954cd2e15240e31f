import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../testing/app.js";
import { testDialects } from "../testing/stores.js";
import { startOf, type TraceClient, traceClient } from "../testing/trace.js";

const MiB = 1024 * 1024;

/**
 * Issue 12 item 3: values past what a database can store or index (a 1 MB id, a NUL byte in a
 * text field, filters beyond SQLite's expression limits) are the request's fault, a 4xx in the
 * surface's shape on both databases, never a 500.
 */
describe.each(testDialects)("inputs past the database's limits on %s", (dialect) => {
  let t: TestApp;
  let alice: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });

  const expectClientError = (res: { statusCode: number; body: string }, what: string) => {
    expect(res.statusCode, `${what}: ${res.body.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, `${what}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
    expect(res.body).not.toMatch(/\n\s+at /);
  };

  it.each([
    ["id", { id: "i".repeat(MiB) }],
    ["trace_id", { trace_id: "t".repeat(MiB) }],
    ["op_name", { op_name: "o".repeat(MiB) }],
    ["a NUL in op_name", { op_name: "op\u0000name" }],
  ])("refuses a call whose %s cannot be stored", async (what, fields) => {
    expectClientError(await alice.post("/call/start", { start: startOf("alice/limits", fields) }), what);
  });

  it("refuses filters beyond the database's expression limits", async () => {
    const and = { $and: Array.from({ length: 5000 }, (_, i) => ({ $eq: [{ $getField: "op_name" }, { $literal: `op-${i}` }] })) };
    expectClientError(await alice.post("/calls/stream_query", { project_id: "alice/limits", query: { $expr: and } }), "$and of 5000 terms");
    const inList = { $in: [{ $getField: "op_name" }, Array.from({ length: 40000 }, (_, i) => ({ $literal: `op-${i}` }))] };
    expectClientError(await alice.post("/calls/stream_query", { project_id: "alice/limits", query: { $expr: inList } }), "$in of 40000 literals");
  });

  it("refuses feedback and costs whose references or names are too long to index", async () => {
    const feedback = { project_id: "alice/limits", weave_ref: `weave:///alice/limits/call/${"c".repeat(MiB)}`, feedback_type: "wandb.reaction.1", payload: { emoji: "👍" } };
    expectClientError(await alice.post("/feedback/create", feedback), "long weave_ref");
    const costs = { project_id: "alice/limits", costs: { ["m".repeat(MiB)]: { prompt_token_cost: 1, completion_token_cost: 1 } } };
    expectClientError(await alice.post("/cost/create", costs), "long llm_id");
  });

  it("refuses an artifact whose type or metadata key holds a NUL", async () => {
    const upload = (fields: Record<string, unknown>) => t.request(t.keys.alice, { method: "POST", url: "/v1/preview/artifacts", payload: { project: "p", name: "d", files: [{ name: "train.jsonl", text: "{}\n" }], ...fields } });
    expectClientError(await upload({ type: "data\u0000set" }), "NUL in type");
    expectClientError(await upload({ metadata: { "k\u0000": 1 } }), "NUL in a metadata key");
  });
});
