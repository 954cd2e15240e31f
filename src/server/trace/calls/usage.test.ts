import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { endOf, startOf, type TraceClient, traceClient } from "../../../testing/trace.js";

const P = "alice/usage";
const usage = (prompt: number, completion: number, model = "m") => ({ usage: { [model]: { prompt_tokens: prompt, completion_tokens: completion, requests: 1 } } });

describe.each(testDialects)("usage, stats and threads on %s", (dialect) => {
  let t: TestApp;
  let alice: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = traceClient(t, t.keys.alice);
    // Trace t1: root -> child -> grandchild (still running); trace t2: lone; all with usage on m.
    await alice.json("/call/upsert_batch", {
      batch: [
        { mode: "start", req: { start: startOf(P, { id: "root", trace_id: "t1", started_at: "2024-05-01T10:00:00Z" }) } },
        { mode: "end", req: { end: endOf(P, "root", { ended_at: "2024-05-01T10:00:03Z", summary: usage(100, 10) }) } },
        { mode: "start", req: { start: startOf(P, { id: "child", trace_id: "t1", parent_id: "root", started_at: "2024-05-01T10:00:01Z" }) } },
        { mode: "end", req: { end: endOf(P, "child", { ended_at: "2024-05-01T10:00:02Z", summary: { usage: { m: { input_tokens: 200, output_tokens: 20 }, other: { prompt_tokens: 5 } } }, exception: "oops" }) } },
        { mode: "start", req: { start: startOf(P, { id: "grandchild", trace_id: "t1", parent_id: "child", started_at: "2024-05-01T10:00:01.5Z" }) } },
        { mode: "start", req: { start: startOf(P, { id: "lone", trace_id: "t2", started_at: "2024-05-01T11:30:00Z" }) } },
        { mode: "end", req: { end: endOf(P, "lone", { ended_at: "2024-05-01T11:30:00.250Z", summary: usage(150, 15) }) } },
      ],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it("rolls usage up from descendants for root calls", async () => {
    const res = await alice.json("/calls/usage", { project_id: P, call_ids: ["root", "lone", "missing"] });
    expect(res.call_usage.root).toEqual({
      m: {
        requests: 1,
        prompt_tokens: 300,
        completion_tokens: 30,
        total_tokens: 330,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        prompt_tokens_total_cost: null,
        completion_tokens_total_cost: null,
        cache_read_input_tokens_total_cost: null,
        cache_creation_input_tokens_total_cost: null,
      },
      other: expect.objectContaining({ prompt_tokens: 5, total_tokens: 5, requests: 0 }),
    });
    expect(res.call_usage.lone.m.prompt_tokens).toBe(150);
    expect(res.call_usage.missing).toEqual({});
    expect(res.unfinished_call_ids).toEqual(["grandchild"]);
    const tooSmall = await alice.post("/calls/usage", { project_id: P, call_ids: ["root"], limit: 2 });
    expect(tooSmall.statusCode).toBe(413);
    expect(tooSmall.json().reason).toMatch(/single trace exceeds/);
    expect((await alice.post("/calls/usage", { project_id: P, call_ids: ["root"], limit: 0 })).statusCode).toBe(400);
  });

  it("rolls usage up for every call of a trace", async () => {
    const res = await alice.json("/trace/usage", { project_id: P, filter: { trace_ids: ["t1"] } });
    expect(Object.keys(res.call_usage).sort()).toEqual(["child", "grandchild", "root"]);
    expect(res.call_usage.child.m.prompt_tokens).toBe(200);
    expect(res.call_usage.root.m.prompt_tokens).toBe(300);
    expect(res.call_usage.grandchild).toEqual({});
    const partial = await alice.json("/trace/usage", { project_id: P, filter: { call_ids: ["root"] } });
    expect(partial.call_usage.root.m.prompt_tokens).toBe(100);
  });

  it("buckets call and usage metrics over time", async () => {
    const stats = await alice.json("/calls/stats", {
      project_id: P,
      start: "2024-05-01T10:00:00Z",
      end: "2024-05-01T12:00:00Z",
      granularity: 3600,
      call_metrics: [{ metric: "call_count" }, { metric: "error_count" }, { metric: "latency_ms", aggregations: ["avg", "max"], percentiles: [50] }],
      usage_metrics: [{ metric: "input_tokens" }, { metric: "output_tokens", aggregations: ["sum", "max"] }],
    });
    expect(stats).toMatchObject({ start: "2024-05-01T10:00:00.000Z", end: "2024-05-01T12:00:00.000Z", granularity: 3600, timezone: "UTC" });
    expect(stats.call_buckets).toEqual([
      { timestamp: "2024-05-01T10:00:00.000Z", sum_call_count: 3, sum_error_count: 1, avg_latency_ms: 2000, max_latency_ms: 3000, p50_latency_ms: 2000, count: 3 },
      { timestamp: "2024-05-01T11:00:00.000Z", sum_call_count: 1, sum_error_count: 0, avg_latency_ms: 250, max_latency_ms: 250, p50_latency_ms: 250, count: 1 },
    ]);
    expect(stats.usage_buckets).toEqual([
      { timestamp: "2024-05-01T10:00:00.000Z", model: "m", sum_input_tokens: 300, sum_output_tokens: 30, max_output_tokens: 20, count: 2 },
      { timestamp: "2024-05-01T10:00:00.000Z", model: "other", sum_input_tokens: 5, sum_output_tokens: 0, max_output_tokens: 0, count: 1 },
      { timestamp: "2024-05-01T11:00:00.000Z", model: "m", sum_input_tokens: 150, sum_output_tokens: 15, max_output_tokens: 15, count: 1 },
      { timestamp: "2024-05-01T11:00:00.000Z", model: "other", sum_input_tokens: 0, sum_output_tokens: 0, max_output_tokens: null, count: 0 },
    ]);
    const local = await alice.json("/calls/stats", { project_id: P, start: "2024-05-01T09:45:00Z", end: "2024-05-01T12:00:00Z", granularity: 3600, timezone: "Asia/Kolkata", call_metrics: [{ metric: "call_count" }] });
    expect(local.call_buckets[0].timestamp).toBe("2024-05-01T09:30:00.000Z");
    expect((await alice.post("/calls/stats", { project_id: P, start: "2024-05-01T00:00:00Z", end: "2024-07-01T00:00:00Z" })).statusCode).toBe(400);
    expect((await alice.post("/calls/stats", { project_id: P, start: "2024-05-02T00:00:00Z", end: "2024-05-01T00:00:00Z" })).statusCode).toBe(400);
    expect((await alice.post("/calls/stats", { project_id: P, start: "2024-05-01T00:00:00Z", timezone: "Mars/Base" })).statusCode).toBe(400);
    const auto = await alice.json("/calls/stats", { project_id: P, start: "2024-05-01T10:00:00Z", end: "2024-05-01T11:00:00Z", call_metrics: [{ metric: "call_count" }] });
    expect(auto.granularity).toBe(300);
    expect(auto.call_buckets).toHaveLength(12);
  });

  it("summarises threads from their turn calls", async () => {
    const project = "alice/threads";
    const turn = (id: string, thread: string, start: string, end?: string) => [
      { mode: "start", req: { start: startOf(project, { id, thread_id: thread, turn_id: id, started_at: start }) } },
      ...(end ? [{ mode: "end", req: { end: endOf(project, id, { ended_at: end }) } }] : []),
    ];
    await alice.json("/call/upsert_batch", {
      batch: [
        ...turn("a1", "A", "2024-05-01T10:00:00Z", "2024-05-01T10:00:01Z"),
        ...turn("a2", "A", "2024-05-01T10:01:00Z", "2024-05-01T10:01:03Z"),
        { mode: "start", req: { start: startOf(project, { id: "a2-child", thread_id: "A", turn_id: "a2", started_at: "2024-05-01T10:01:01Z" }) } },
        ...turn("b1", "B", "2024-05-01T09:00:00Z", "2024-05-01T11:00:00Z"),
        ...turn("c1", "C", "2024-05-01T12:00:00Z"),
      ],
    });
    const threads = await alice.lines("/threads/stream_query", { project_id: project });
    expect(threads).toEqual([
      {
        thread_id: "B",
        turn_count: 1,
        start_time: "2024-05-01T09:00:00.000000Z",
        last_updated: "2024-05-01T11:00:00.000000Z",
        first_turn_id: "b1",
        last_turn_id: "b1",
        p50_turn_duration_ms: 7_200_000,
        p99_turn_duration_ms: 7_200_000,
      },
      { thread_id: "A", turn_count: 2, start_time: "2024-05-01T10:00:00.000000Z", last_updated: "2024-05-01T10:01:03.000000Z", first_turn_id: "a1", last_turn_id: "a2", p50_turn_duration_ms: 2000, p99_turn_duration_ms: 2980 },
    ]);
    const sorted = await alice.lines("/threads/stream_query", { project_id: project, sort_by: [{ field: "turn_count", direction: "desc" }], limit: 1 });
    expect(sorted.map((thread) => thread.thread_id)).toEqual(["A"]);
    const filtered = await alice.lines("/threads/stream_query", { project_id: project, filter: { after_datetime: "2024-05-01T09:30:00Z", thread_ids: ["A", "B"] } });
    expect(filtered.map((thread) => [thread.thread_id, thread.turn_count])).toEqual([["A", 2]]);
    expect((await alice.post("/threads/stream_query", { project_id: project, sort_by: [{ field: "nope", direction: "asc" }] })).statusCode).toBe(400);
  });
});
