import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { endOf, startOf, type TraceClient, traceClient } from "../../../testing/trace.js";

describe.each(testDialects)("call writes on %s", (dialect) => {
  let t: TestApp;
  let alice: TraceClient;
  let bob: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = traceClient(t, t.keys.alice);
    bob = traceClient(t, t.keys.bob);
  });
  afterAll(async () => {
    await t.close();
  });

  const read = (project: string, id: string, client = alice) => client.json("/call/read", { project_id: project, id });

  it("starts a call with server ids, ends it, and reads it back with derived summary", async () => {
    const project = "alice/p-start";
    const started = await alice.json("/call/start", { start: startOf(project, { op_name: "weave:///alice/p-start/op/predict:abc123", inputs: { x: 1 }, attributes: { a: "b" } }) });
    expect(started.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(started.trace_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await read(project, started.id)).call.summary.weave).toEqual({ status: "running", trace_name: "predict" });

    expect(await alice.json("/call/end", { end: endOf(project, started.id, { output: { y: 2 }, summary: { usage: { m: { prompt_tokens: 3 } } }, ended_at: "2024-05-01T12:00:01.5Z" }) })).toEqual({});
    const { call } = await read(project, started.id);
    expect(call).toMatchObject({
      id: started.id,
      trace_id: started.trace_id,
      project_id: project,
      op_name: "weave:///alice/p-start/op/predict:abc123",
      started_at: "2024-05-01T12:00:00.000000Z",
      ended_at: "2024-05-01T12:00:01.500000Z",
      inputs: { x: 1 },
      attributes: { a: "b" },
      output: { y: 2 },
      exception: null,
      parent_id: null,
      display_name: null,
      deleted_at: null,
    });
    expect(call.wb_user_id).toEqual(expect.any(String));
    expect(call.wb_username).toBeUndefined();
    const [named] = await alice.lines("/calls/stream_query", { project_id: project, include_usernames: true });
    expect(named.wb_username).toBe("alice");
    const { calls: queried } = (await alice.post("/calls/query", { project_id: project, include_usernames: true })).json();
    expect(queried[0].wb_username).toBe("alice");
    const [narrow] = await alice.lines("/calls/stream_query", { project_id: project, include_usernames: true, columns: ["id"] });
    expect(narrow.wb_username).toBe("alice");
    expect(call.summary).toEqual({ usage: { m: { prompt_tokens: 3 } }, weave: { status: "success", latency_ms: 1500, trace_name: "predict" } });
  });

  it("accepts an end before its start and merges them", async () => {
    const project = "alice/p-order";
    await alice.json("/call/end", { end: endOf(project, "c1", { output: "done", exception: "boom" }) });
    expect((await read(project, "c1")).call).toBeNull();
    await alice.json("/call/start", { start: startOf(project, { id: "c1", trace_id: "t1" }) });
    const { call } = await read(project, "c1");
    expect(call).toMatchObject({ id: "c1", trace_id: "t1", output: "done", exception: "boom" });
    expect(call.summary.weave.status).toBe("error");
  });

  it("processes upsert_batch items in order and answers one result per item", async () => {
    const project = "alice/p-batch";
    const res = await alice.json("/call/upsert_batch", {
      batch: [
        { mode: "start", req: { start: startOf(project, { id: "a", trace_id: "t" }) } },
        { mode: "start", req: { start: startOf(project, { id: "b", trace_id: "t", parent_id: "a", display_name: "child" }) } },
        { mode: "end", req: { end: endOf(project, "b", { output: 1, display_name: "ignored" }) } },
        { mode: "end", req: { end: endOf(project, "a", { output: 2, summary: { status_counts: { error: 1 } } }) } },
      ],
    });
    expect(res).toEqual({ res: [{ id: "a", trace_id: "t" }, { id: "b", trace_id: "t" }, {}, {}] });
    const b = (await read(project, "b")).call;
    expect(b).toMatchObject({ parent_id: "a", display_name: "child", output: 1 });
    expect(b.summary.weave).toEqual({ status: "success", latency_ms: 1000, display_name: "child" });
    expect((await read(project, "a")).call.summary.weave.status).toBe("descendant_error");
  });

  it("rejects an unknown mode with 400 and a malformed item with 422 pointing at it", async () => {
    const project = "alice/p-bad";
    const bad = await alice.post("/call/upsert_batch", { batch: [{ mode: "middle", req: {} }] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().reason).toMatch(/Invalid mode/);
    const invalid = await alice.post("/call/upsert_batch", { batch: [{ mode: "start", req: { start: startOf(project, { started_at: "yesterday" }) } }] });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().detail[0]).toMatchObject({ loc: ["body", "batch", 0, "req", "start", "started_at"], msg: "Input should be a valid datetime" });
    const missing = await alice.post("/call/start", { start: { project_id: project } });
    expect(missing.statusCode).toBe(422);
    const locs = missing.json().detail.map((issue: { loc: string[] }) => issue.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.start.op_name", "body.start.started_at", "body.start.attributes", "body.start.inputs"]));
  });

  it("updates display names and requires one", async () => {
    const project = "alice/p-update";
    await alice.json("/call/start", { start: startOf(project, { id: "u" }) });
    expect(await alice.json("/call/update", { project_id: project, call_id: "u", display_name: "renamed" })).toEqual({});
    expect((await read(project, "u")).call.display_name).toBe("renamed");
    const res = await alice.post("/call/update", { project_id: project, call_id: "u" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ reason: "One of [display_name] is required for call update" });
  });

  it("deletes calls with all their descendants", async () => {
    const project = "alice/p-delete";
    const starts = [
      { id: "root", parent_id: null },
      { id: "child", parent_id: "root" },
      { id: "grandchild", parent_id: "child" },
      { id: "other", parent_id: null },
    ].map((fields) => ({ mode: "start", req: { start: startOf(project, { ...fields, trace_id: "t" }) } }));
    await alice.json("/call/upsert_batch", { batch: starts });
    expect(await alice.json("/calls/delete", { project_id: project, call_ids: ["child"] })).toEqual({ num_deleted: 2 });
    expect((await read(project, "grandchild")).call).toBeNull();
    expect((await read(project, "root")).call).not.toBeNull();
    expect(await alice.json("/calls/delete", { project_id: project, call_ids: ["child", "missing"] })).toEqual({ num_deleted: 0 });
    const tooMany = await alice.post("/calls/delete", { project_id: project, call_ids: Array.from({ length: 1001 }, (_, i) => `c${i}`) });
    expect(tooMany.statusCode).toBe(400);
  });

  it("writes complete calls and single starts and ends through the v2 routes", async () => {
    const project = "alice/p-v2";
    const complete = { ...startOf(project, { id: "v", trace_id: "tv" }), ...endOf(project, "v", { output: "ok" }) };
    expect(await alice.json("/v2/alice/p-v2/calls/complete", { batch: [complete] })).toEqual({});
    expect((await read(project, "v")).call).toMatchObject({ output: "ok", ended_at: "2024-05-01T12:00:01.000000Z" });
    const started = await alice.json("/v2/alice/p-v2/call/start", { start: startOf(project) });
    await alice.json("/v2/alice/p-v2/call/end", { end: endOf(project, started.id) });
    expect((await read(project, started.id)).call.summary.weave.status).toBe("success");
    const mismatch = await alice.post("/v2/alice/other/call/start", { start: startOf(project) });
    expect(mismatch.statusCode).toBe(400);
  });

  it("keeps projects of other entities out of reach (404, as for unknown projects)", async () => {
    await bob.json("/call/start", { start: startOf("bob/secret", { id: "s" }) });
    const attempts = [
      ["/call/start", { start: startOf("bob/secret") }],
      ["/call/end", { end: endOf("bob/secret", "s") }],
      [
        "/call/upsert_batch",
        {
          batch: [
            { mode: "start", req: { start: startOf("alice/mine") } },
            { mode: "end", req: { end: endOf("bob/secret", "s") } },
          ],
        },
      ],
      ["/call/read", { project_id: "bob/secret", id: "s" }],
      ["/call/update", { project_id: "bob/secret", call_id: "s", display_name: "x" }],
      ["/calls/delete", { project_id: "bob/secret", call_ids: ["s"] }],
      ["/v2/bob/secret/calls/complete", { batch: [] }],
    ] as const;
    for (const [url, body] of attempts) {
      const res = await alice.post(url, body);
      expect(res.statusCode, url).toBe(404);
      expect(res.json().reason).toMatch(/not found/);
    }
    expect((await read("bob/secret", "s", bob)).call).toMatchObject({ id: "s", display_name: null });
  });

  it("asks for credentials", async () => {
    const res = await t.app.inject({ method: "POST", url: "/trace/call/read", payload: { project_id: "alice/p", id: "x" } });
    expect(res.statusCode).toBe(401);
    expect(res.json().reason).toEqual(expect.any(String));
  });
});
