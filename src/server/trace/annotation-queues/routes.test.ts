import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../../store/keys.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { endOf, jsonLines, startOf, type TraceClient, traceClient } from "../../../testing/trace.js";

/** Calls stored through the calls API, whose headers queue items cache (call-2 is still running). */
const p = "alice/aq";
const summarize = "weave:///alice/aq/op/summarize:abc";
const batch = [
  { mode: "start", req: { start: startOf(p, { id: "call-1", trace_id: "trace-a", op_name: summarize, started_at: "2026-01-01T00:00:03Z" }) } },
  { mode: "end", req: { end: endOf(p, "call-1", { ended_at: "2026-01-01T00:00:04Z" }) } },
  { mode: "start", req: { start: startOf(p, { id: "call-2", trace_id: "trace-a", op_name: "weave:///alice/aq/op/classify:def", started_at: "2026-01-01T00:00:01Z" }) } },
  { mode: "start", req: { start: startOf(p, { id: "call-3", trace_id: "trace-b", op_name: summarize, started_at: "2026-01-01T00:00:02Z" }) } },
  { mode: "end", req: { end: endOf(p, "call-3", { ended_at: "2026-01-01T00:00:05Z" }) } },
  { mode: "start", req: { start: startOf(p, { id: "deleted-call", trace_id: "trace-c" }) } },
];

describe.each(testDialects)("annotation queues on %s", (dialect) => {
  let t: TestApp;
  let c: TraceClient;
  /** A second key of the same entity: another annotator. */
  let c2: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    c = traceClient(t, t.keys.alice);
    await c.json("/call/upsert_batch", { batch });
    await c.json("/calls/delete", { project_id: p, call_ids: ["deleted-call"] });
    c2 = traceClient(t, (await createApiKey(t.store.db, "alice", { name: "second annotator" })).key);
  });
  afterAll(async () => {
    await t.close();
  });
  const createQueue = async (name: string, extra: Record<string, unknown> = {}) => (await c.post("/annotation_queues", { project_id: p, name, scorer_refs: ["weave:///alice/aq/object/quality:abc"], ...extra })).json().id as string;
  const queryQueues = async (body: Record<string, unknown> = {}) => jsonLines((await c.post("/annotation_queues/query", { project_id: p, ...body })).body) as { id: string; name: string }[];
  const items = async (queueId: string, body: Record<string, unknown> = {}, client = c) => (await client.post(`/annotation_queues/${queueId}/items/query`, { project_id: p, ...body })).json().items as Record<string, unknown>[];

  it("creates, reads, updates, lists and deletes queues", async () => {
    const id = await createQueue("Error Review", { description: "calls with exceptions" });
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const read = (await c.get(`/annotation_queues/${id}`, { project_id: p })).json().queue;
    expect(read).toMatchObject({ id, project_id: p, name: "Error Review", description: "calls with exceptions", scorer_refs: ["weave:///alice/aq/object/quality:abc"], deleted_at: null });
    expect(read.created_by).toEqual(expect.any(String));

    const updated = (await c.put(`/annotation_queues/${id}`, { project_id: p, description: "only this changes" })).json().queue;
    expect(updated).toMatchObject({ name: "Error Review", description: "only this changes" });
    expect(updated.updated_at >= read.updated_at).toBe(true);

    const other = await createQueue("latency triage");
    expect((await queryQueues({ name: "error" })).map((q) => q.id)).toEqual([id]);
    expect((await queryQueues({ sort_by: [{ field: "name", direction: "asc" }] })).map((q) => q.name)).toEqual(["Error Review", "latency triage"]);
    // Newest first by default (ties, within one millisecond, by id).
    const newestFirst = (await queryQueues()).map((q) => q.id);
    expect(newestFirst).toHaveLength(2);
    expect((await queryQueues({ limit: 1, offset: 1 })).map((q) => q.id)).toEqual(newestFirst.slice(1));

    const deleted = await t.app.inject({ method: "DELETE", url: `/trace/annotation_queues/${other}`, query: { project_id: p }, headers: { authorization: `Bearer ${t.keys.alice}` } });
    expect(deleted.json().queue.deleted_at).toEqual(expect.any(String));
    expect((await c.get(`/annotation_queues/${other}`, { project_id: p })).statusCode).toBe(404);
    expect((await queryQueues()).map((q) => q.id)).not.toContain(other);
    expect((await c.put(`/annotation_queues/${other}`, { project_id: p, name: "x" })).statusCode).toBe(404);
    expect((await c.post("/annotation_queues", { project_id: p, name: " ", scorer_refs: [] })).statusCode).toBe(400);
    expect((await c.post("/annotation_queues", { project_id: p, name: "no refs" })).statusCode).toBe(422);
  });

  it("adds calls once, skips unknown and deleted calls and counts progress", async () => {
    const id = await createQueue("Items");
    const added = await c.post(`/annotation_queues/${id}/items`, { project_id: p, call_ids: ["call-1", "call-2", "missing", "deleted-call"], display_fields: ["inputs.prompt", "output"] });
    expect(added.json()).toEqual({ added_count: 2, duplicates: 0 });
    const again = await c.post(`/annotation_queues/${id}/items`, { project_id: p, call_ids: ["call-1", "call-3", "call-3"], display_fields: [] });
    expect(again.json()).toEqual({ added_count: 1, duplicates: 2 });

    const all = await items(id, { include_position: true });
    expect(all.map((item) => item.call_id)).toEqual(["call-1", "call-2", "call-3"]);
    expect(all[0]).toMatchObject({
      queue_id: id,
      project_id: p,
      call_started_at: "2026-01-01T00:00:03.000000Z",
      call_ended_at: "2026-01-01T00:00:04.000000Z",
      call_op_name: "weave:///alice/aq/op/summarize:abc",
      call_trace_id: "trace-a",
      display_fields: ["inputs.prompt", "output"],
      annotation_state: "unstarted",
      annotator_user_id: null,
      position_in_queue: 1,
    });
    expect(all.map((item) => item.position_in_queue)).toEqual([1, 2, 3]);
    expect((await items(id, { sort_by: [{ field: "call_started_at", direction: "desc" }] })).map((item) => item.call_id)).toEqual(["call-1", "call-3", "call-2"]);
    expect((await items(id, { filter: { call_op_name: "weave:///alice/aq/op/summarize:abc" } })).map((item) => item.call_id)).toEqual(["call-1", "call-3"]);
    expect((await items(id, { filter: { call_trace_id: "trace-b" } })).map((item) => item.call_id)).toEqual(["call-3"]);
    expect((await items(id, { limit: 1, offset: 1 })).map((item) => item.call_id)).toEqual(["call-2"]);

    const [first, second] = all as { id: string }[];
    const progress = (itemId: string, state: string, client = c) => client.post(`/annotation_queues/${id}/items/${itemId}/progress`, { project_id: p, annotation_state: state });
    expect((await progress(first!.id, "in_progress")).json().item).toMatchObject({ id: first!.id, annotation_state: "in_progress" });
    expect((await progress(first!.id, "completed")).statusCode).toBe(200);
    expect((await progress(first!.id, "completed")).statusCode).toBe(200);
    const backwards = await progress(first!.id, "in_progress");
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().reason).toMatch(/Invalid state transition from 'completed' to 'in_progress'/);
    expect((await progress(second!.id, "unstarted")).statusCode).toBe(400);
    expect((await progress("no-such-item", "completed")).statusCode).toBe(404);

    // States are per annotator: the second annotator has not started anything.
    const mine = await items(id, { filter: { annotation_states: ["completed"] } });
    expect(mine.map((item) => item.call_id)).toEqual(["call-1"]);
    expect(mine[0]!.annotator_user_id).toEqual(expect.any(String));
    expect((await items(id, {}, c2)).map((item) => item.annotation_state)).toEqual(["unstarted", "unstarted", "unstarted"]);
    expect((await progress(second!.id, "skipped", c2)).statusCode).toBe(200);

    const stats = await c.post("/annotation_queues/stats", { project_id: p, queue_ids: [id, "unknown-queue"] });
    expect(stats.json()).toEqual({
      stats: [
        { queue_id: id, total_items: 3, completed_items: 2 },
        { queue_id: "unknown-queue", total_items: 0, completed_items: 0 },
      ],
    });
  });

  it("keeps queues inside their entity", async () => {
    const id = await createQueue("Private");
    const bob = traceClient(t, t.keys.bob);
    expect((await bob.get(`/annotation_queues/${id}`, { project_id: p })).statusCode).toBe(404);
    expect((await bob.get(`/annotation_queues/${id}`, { project_id: "bob/aq" })).statusCode).toBe(404);
    expect((await bob.post(`/annotation_queues/${id}/items`, { project_id: "bob/aq", call_ids: ["call-1"], display_fields: [] })).statusCode).toBe(404);
  });
});
