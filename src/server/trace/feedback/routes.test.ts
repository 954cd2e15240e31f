import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { endOf, startOf, type TraceClient, traceClient } from "../../../testing/trace.js";

const P = "alice/fb";
const callRef = (id: string) => `weave:///${P}/call/${id}`;
const scorerRef = `weave:///${P}/object/scorer:abc`;
const runnable = (id: string, score: number, extra: Record<string, unknown> = {}) => ({
  project_id: P,
  weave_ref: callRef(id),
  feedback_type: "wandb.runnable.scorer",
  runnable_ref: scorerRef,
  payload: { output: { score, passed: score > 0.5, label: score > 0.5 ? "good" : "bad" } },
  ...extra,
});

describe.each(testDialects)("feedback on %s", (dialect) => {
  let t: TestApp;
  let alice: TraceClient;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    alice = traceClient(t, t.keys.alice);
  });
  afterAll(async () => {
    await t.close();
  });

  const query = (body: Record<string, unknown> = {}) => alice.json("/feedback/query", { project_id: P, ...body });
  const rejected = async (body: Record<string, unknown>, message: RegExp) => {
    const res = await alice.post("/feedback/create", body);
    expect(res.statusCode, JSON.stringify(body)).toBe(400);
    expect(res.json().reason).toMatch(message);
  };

  it("stores reactions with their CLDR aliases and detoned forms", async () => {
    const res = await alice.json("/feedback/create", { project_id: P, weave_ref: callRef("r"), feedback_type: "wandb.reaction.1", payload: { emoji: "👍🏽" } });
    expect(res).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      wb_user_id: expect.any(String),
      payload: { emoji: "👍🏽", alias: ":thumbs_up_medium_skin_tone:", detoned: "👍", detoned_alias: ":thumbs_up:" },
    });
    await rejected({ project_id: P, weave_ref: callRef("r"), feedback_type: "wandb.reaction.1", payload: { emoji: "👍👎" } }, /exactly one emoji/);
    await rejected({ project_id: P, weave_ref: callRef("r"), feedback_type: "wandb.reaction.1", payload: { emoji: "ok" } }, /exactly one emoji/);
  });

  it("checks the payloads and refs each feedback type needs", async () => {
    await alice.json("/feedback/create", { project_id: P, weave_ref: callRef("n"), feedback_type: "wandb.note.1", payload: { note: "fine" } });
    await rejected({ project_id: P, weave_ref: callRef("n"), feedback_type: "wandb.note.1", payload: { note: "" } }, /note/);
    await rejected({ project_id: P, weave_ref: callRef("n"), feedback_type: "wandb.note.1", payload: { note: "x".repeat(1025) } }, /note/);
    await rejected({ ...runnable("a", 1), runnable_ref: undefined }, /runnable_ref is required/);
    await rejected({ ...runnable("a", 1), runnable_ref: `weave:///${P}/object/other:abc` }, /name scorer/);
    await rejected({ ...runnable("a", 1), runnable_ref: `weave:///${P}/op/scorer:abc` }, /call_ref is required/);
    await alice.json("/feedback/create", runnable("a", 1, { runnable_ref: `weave:///${P}/op/scorer:abc`, call_ref: callRef("score-call") }));
    await rejected({ ...runnable("a", 1), payload: { score: 1 } }, /'output' is required/);
    await rejected({ project_id: P, weave_ref: callRef("a"), feedback_type: "wandb.annotation.quality", payload: { value: 1 } }, /annotation_ref is required/);
    await rejected({ project_id: P, weave_ref: callRef("a"), feedback_type: "wandb.annotation.quality", annotation_ref: `weave:///${P}/object/other:v`, payload: { value: 1 } }, /name quality/);
    await rejected({ project_id: P, weave_ref: callRef("a"), feedback_type: "custom", annotation_ref: `weave:///${P}/object/x:v`, payload: {} }, /annotation_ref is not allowed/);
    await rejected({ project_id: P, weave_ref: callRef("a"), feedback_type: "custom", call_ref: callRef("b"), payload: {} }, /call_ref is not allowed/);
    await rejected({ project_id: P, weave_ref: callRef("a"), feedback_type: "custom", scorer_tags: ["x"], payload: {} }, /scorer_tags/);
    await rejected({ project_id: P, weave_ref: callRef("a"), feedback_type: "wandb.agent_user_feedback", payload: {} }, /scorer_tags is required/);
    await rejected({ ...runnable("a", 1), call_ref: "not-a-ref" }, /call_ref/);
    await rejected({ project_id: P, weave_ref: callRef("a"), feedback_type: "custom", payload: { big: "x".repeat(1024 * 1024) } }, /too large/);
    const schema = await alice.post("/feedback/create", { project_id: P, feedback_type: "custom", payload: {} });
    expect(schema.statusCode).toBe(422);
  });

  it("checks annotation values against the field schema of a stored AnnotationSpec", async () => {
    const spec = { _type: "AnnotationSpec", _class_name: "AnnotationSpec", _bases: ["Object", "BaseModel"], name: "quality", field_schema: { type: "integer", minimum: 1.0, maximum: 5 } };
    // `1.0` is sent as JSON text: the stored spec keeps Python's float, which the validator must still read as 1.
    const text = JSON.stringify({ obj: { project_id: P, object_id: "quality", val: spec } }).replace('"minimum":1', '"minimum":1.0');
    const digest = (await alice.json("/obj/create", text)).digest as string;
    const specRef = `weave:///${P}/object/quality:${digest}`;
    const annotation = (value: unknown, annotationRef = specRef) => ({ project_id: P, weave_ref: callRef("annotated"), feedback_type: "wandb.annotation.quality", annotation_ref: annotationRef, payload: { value } });

    expect((await alice.json("/feedback/create", annotation(4))).payload).toEqual({ value: 4 });
    await alice.json("/feedback/create", annotation(1, `weave:///${P}/object/quality:latest`));
    await rejected(annotation(9), /does not match annotation spec/);
    await rejected(annotation(0), /does not match annotation spec/);
    await rejected(annotation("4"), /does not match annotation spec/);
    await rejected(annotation(4, `weave:///${P}/object/quality:v9`), /not found/);
    await rejected(annotation(4, `weave:///alice/elsewhere/object/quality:${digest}`), /does not match project/);
    await alice.json("/obj/delete", { project_id: P, object_id: "quality" });
    await rejected(annotation(4), /not found/);
  });

  it("accepts a queue_id only for a live annotation queue of the project", async () => {
    const note = { project_id: P, weave_ref: callRef("queued"), feedback_type: "wandb.note.1", payload: { note: "looked at it" } };
    const queueId = (await alice.json("/annotation_queues", { project_id: P, name: "review", scorer_refs: [] })).id as string;
    expect((await alice.json("/feedback/create", { ...note, queue_id: queueId })).id).toEqual(expect.any(String));
    expect((await query({ query: { $expr: { $eq: [{ $getField: "queue_id" }, { $literal: queueId }] } } })).result).toHaveLength(1);
    await rejected({ ...note, queue_id: "no-such-queue" }, /Queue no-such-queue not found/);
    await t.app.inject({ method: "DELETE", url: `/trace/annotation_queues/${queueId}`, query: { project_id: P }, headers: { authorization: `Bearer ${t.keys.alice}` } });
    await rejected({ ...note, queue_id: queueId }, /not found or has been deleted/);
  });

  it("honours client ids, treats a repeated id as a retry, and validates a batch before storing any of it", async () => {
    const first = await alice.json("/feedback/create", { ...runnable("idem", 0.1), id: "fixed-id" });
    const again = await alice.json("/feedback/create", { ...runnable("idem", 0.9), id: "fixed-id" });
    expect(again).toEqual(first);
    const batch = await alice.post("/feedback/batch/create", { batch: [runnable("b1", 0.2), { ...runnable("b2", 0.3), runnable_ref: undefined }] });
    expect(batch.statusCode).toBe(400);
    expect((await query({ query: { $expr: { $eq: [{ $getField: "weave_ref" }, { $literal: callRef("b1") }] } } })).total_count).toBe(0);
    const ok = await alice.json("/feedback/batch/create", { batch: [runnable("b1", 0.2), runnable("b2", 0.3)] });
    expect(ok.res).toHaveLength(2);
  });

  it("queries with fields, payload paths, sorting, paging and a total count", async () => {
    const project = "alice/fbq";
    for (const [id, score] of [
      ["x", 0.2],
      ["y", 0.9],
      ["z", 0.5],
    ] as const) {
      await alice.json("/feedback/create", { ...runnable(id, score), project_id: project, weave_ref: `weave:///${project}/call/${id}`, runnable_ref: `weave:///${project}/object/scorer:abc` });
    }
    const all = await alice.json("/feedback/query", { project_id: project });
    expect(all.total_count).toBe(3);
    expect(all.result[0]).toMatchObject({ project_id: project, feedback_type: "wandb.runnable.scorer", scorer_tags: [], span_status_code: "UNSET", queue_id: null });
    const sorted = await alice.json("/feedback/query", {
      project_id: project,
      fields: ["weave_ref", "payload.output.score", "payload.output.label"],
      sort_by: [{ field: "payload.output.score", direction: "desc" }],
      limit: 2,
      offset: 0,
    });
    expect(sorted).toEqual({
      total_count: 3,
      result: [
        { weave_ref: `weave:///${project}/call/y`, "payload.output.score": 0.9, "payload.output.label": "good" },
        { weave_ref: `weave:///${project}/call/z`, "payload.output.score": 0.5, "payload.output.label": "bad" },
      ],
    });
    const filtered = await alice.json("/feedback/query", { project_id: project, query: { $expr: { $gt: [{ $getField: "payload.output.score" }, { $literal: 0.4 }] } }, fields: ["weave_ref"] });
    expect(filtered.result.map((row: { weave_ref: string }) => row.weave_ref).sort()).toEqual([`weave:///${project}/call/y`, `weave:///${project}/call/z`]);
    const unknown = await alice.post("/feedback/query", { project_id: project, fields: ["nope"] });
    expect(unknown.statusCode).toBe(400);
  });

  it("replaces feedback only when the replacement is valid, and purges by id", async () => {
    const project = "alice/fbr";
    const make = (score: number) => ({ ...runnable("c", score), project_id: project, weave_ref: `weave:///${project}/call/c`, runnable_ref: `weave:///${project}/object/scorer:abc` });
    const original = await alice.json("/feedback/create", make(0.1));
    const refused = await alice.post("/feedback/replace", { ...make(0.2), runnable_ref: undefined, feedback_id: original.id });
    expect(refused.statusCode).toBe(400);
    expect((await alice.json("/feedback/query", { project_id: project })).result.map((row: { id: string }) => row.id)).toEqual([original.id]);
    const replaced = await alice.json("/feedback/replace", { ...make(0.7), feedback_id: original.id });
    expect(replaced.id).not.toBe(original.id);
    const rows = (await alice.json("/feedback/query", { project_id: project })).result;
    expect(rows.map((row: { id: string; payload: { output: { score: number } } }) => [row.id, row.payload.output.score])).toEqual([[replaced.id, 0.7]]);

    const extra = await alice.json("/feedback/create", make(0.3));
    const other = await alice.json("/feedback/create", make(0.4));
    const byField = await alice.post("/feedback/purge", { project_id: project, query: { $expr: { $eq: [{ $getField: "feedback_type" }, { $literal: "wandb.runnable.scorer" }] } } });
    expect(byField.statusCode).toBe(400);
    expect(byField.json().reason).toBe("Can only purge feedback by specifying one or more feedback ids");
    await alice.json("/feedback/purge", { project_id: project, query: { $expr: { $eq: [{ $getField: "id" }, { $literal: replaced.id }] } } });
    await alice.json("/feedback/purge", { project_id: project, query: { $expr: { $or: [{ $eq: [{ $getField: "id" }, { $literal: extra.id }] }, { $eq: [{ $getField: "id" }, { $literal: other.id }] }] } } });
    expect((await alice.json("/feedback/query", { project_id: project })).total_count).toBe(0);
  });

  it("attaches feedback to calls and filters and sorts calls by it", async () => {
    const project = "alice/fbc";
    await alice.json("/call/upsert_batch", {
      batch: ["k1", "k2", "k3"].flatMap((id, i) => [
        { mode: "start", req: { start: startOf(project, { id, started_at: `2024-05-01T12:00:0${i}Z` }) } },
        { mode: "end", req: { end: endOf(project, id) } },
      ]),
    });
    for (const [id, score] of [
      ["k1", 0.3],
      ["k2", 0.8],
    ] as const) {
      await alice.json("/feedback/create", { ...runnable(id, score), project_id: project, weave_ref: `weave:///${project}/call/${id}`, runnable_ref: `weave:///${project}/object/scorer:abc` });
    }
    const calls = await alice.lines("/calls/stream_query", { project_id: project, include_feedback: true });
    expect(calls[0].summary.weave.feedback).toEqual([
      expect.objectContaining({
        feedback_type: "wandb.runnable.scorer",
        weave_ref: `weave:///${project}/call/k1`,
        payload: { output: { score: 0.3, passed: false, label: "bad" } },
        runnable_ref: `weave:///${project}/object/scorer:abc`,
      }),
    ]);
    expect(calls[2].summary.weave.feedback).toEqual([]);
    const field = "feedback.[wandb.runnable.scorer].payload.output.score";
    const best = await alice.lines("/calls/stream_query", { project_id: project, sort_by: [{ field, direction: "desc" }], columns: ["id"] });
    expect(best.map((call) => call.id)).toEqual(["k2", "k1", "k3"]);
    const passing = await alice.lines("/calls/stream_query", { project_id: project, query: { $expr: { $eq: [{ $getField: "feedback.[wandb.runnable.scorer].payload.output.passed" }, { $literal: true }] } }, columns: ["id"] });
    expect(passing.map((call) => call.id)).toEqual(["k2"]);
  });

  it("aggregates payload metrics per time bucket and over the window", async () => {
    const project = "alice/fbs";
    for (const score of [0.2, 0.4, 0.9]) {
      await alice.json("/feedback/create", { ...runnable("s", score), project_id: project, weave_ref: `weave:///${project}/call/s`, runnable_ref: `weave:///${project}/object/scorer:abc` });
    }
    const start = new Date(Date.now() - 3600_000).toISOString();
    const stats = await alice.json("/feedback/stats", {
      project_id: project,
      start,
      feedback_type: "wandb.runnable.scorer",
      granularity: 600,
      metrics: [
        { json_path: "output.score", value_type: "numeric", aggregations: ["avg", "max"], percentiles: [50] },
        { json_path: "output.passed", value_type: "boolean" },
      ],
    });
    expect(stats.granularity).toBe(600);
    expect(stats.buckets.length).toBeGreaterThanOrEqual(6);
    const filled = stats.buckets.filter((bucket: { count: number }) => bucket.count > 0);
    expect(filled).toHaveLength(1);
    expect(filled[0]).toMatchObject({ count: 3, max_output_score: 0.9, p50_output_score: 0.4, count_true_output_passed: 1, count_false_output_passed: 2 });
    expect(filled[0].avg_output_score).toBeCloseTo(0.5);
    expect(stats.buckets.find((bucket: { count: number }) => bucket.count === 0)).toMatchObject({ avg_output_score: 0, max_output_score: null, p50_output_score: null });
    expect(stats.window_stats.output_score).toMatchObject({ max: 0.9, p50: 0.4 });
    const tooLong = await alice.post("/feedback/stats", { project_id: project, start: "2024-01-01T00:00:00Z", end: "2024-03-01T00:00:00Z", metrics: [{ json_path: "output.score" }] });
    expect(tooLong.statusCode).toBe(400);
    const badPath = await alice.post("/feedback/stats", { project_id: project, start, metrics: [{ json_path: "output['x']" }] });
    expect(badPath.statusCode).toBe(400);

    const schema = await alice.json("/feedback/payload_schema", { project_id: project, start });
    expect(schema.paths).toEqual([
      { json_path: "output.label", value_type: "categorical" },
      { json_path: "output.passed", value_type: "boolean" },
      { json_path: "output.score", value_type: "numeric" },
    ]);
  });

  it("says plainly that score aggregation is not implemented", async () => {
    const res = await alice.post("/feedback/aggregate", { project_id: P, after_ms: 0, before_ms: 1 });
    expect(res.statusCode).toBe(501);
    expect(res.json().reason).toMatch(/not implemented/);
  });

  it("keeps other entities' feedback out of reach", async () => {
    const bob = traceClient(t, t.keys.bob);
    await bob.json("/feedback/create", { project_id: "bob/p", weave_ref: "weave:///bob/p/call/x", feedback_type: "wandb.note.1", payload: { note: "secret" } });
    const bodies: [string, Record<string, unknown>][] = [
      ["/feedback/create", { project_id: "bob/p", weave_ref: "weave:///bob/p/call/x", feedback_type: "custom", payload: {} }],
      ["/feedback/batch/create", { batch: [{ project_id: "bob/p", weave_ref: "x", feedback_type: "custom", payload: {} }] }],
      ["/feedback/replace", { project_id: "bob/p", weave_ref: "x", feedback_type: "custom", payload: {}, feedback_id: "x" }],
      ["/feedback/query", { project_id: "bob/p" }],
      ["/feedback/purge", { project_id: "bob/p", query: { $expr: { $eq: [{ $getField: "id" }, { $literal: "x" }] } } }],
      ["/feedback/stats", { project_id: "bob/p", start: new Date().toISOString(), metrics: [] }],
      ["/feedback/payload_schema", { project_id: "bob/p", start: new Date().toISOString() }],
    ];
    for (const [url, body] of bodies) expect((await alice.post(url, body)).statusCode, url).toBe(404);
    expect((await bob.json("/feedback/query", { project_id: "bob/p" })).total_count).toBe(1);
  });
});
