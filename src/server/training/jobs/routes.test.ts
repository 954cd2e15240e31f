import { afterEach, describe, expect, it } from "vitest";
import { insertCheckpoint } from "../../../store/checkpoints.js";
import { startTestApp, type TestApp } from "../../../testing/app.js";
import { testDialects } from "../../../testing/stores.js";
import { allEvents, createRlJob, flatGroups, isTerminal, registerModel, trajectory, varyingGroups, waitForJob } from "../../../testing/training.js";

describe.each(testDialects)("training jobs over HTTP on %s", (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  const post = (payload: unknown, headers: Record<string, string> = {}) => t.request(t.keys.alice, { method: "POST", url: "/v1/preview/training-jobs", payload: payload as object, headers });

  it("queues a job, returns it at once, and reads it back", async () => {
    t = await startTestApp(dialect);
    const modelId = await registerModel(t, "m");
    const res = await post({ model_id: modelId, trajectory_groups: flatGroups() });
    expect(res.statusCode).toBe(200);
    const job = res.json();
    expect(job).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      model_id: modelId,
      kind: "rl",
      status: "queued",
      created_at: expect.any(String),
      started_at: null,
      ended_at: null,
      training_start: null,
      training_end: null,
      error_message: null,
      step: null,
      waiting_for: null,
    });
    const read = await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/training-jobs/${job.id}` });
    expect(read.json()).toEqual(job);
    const events = await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/training-jobs/${job.id}/events` });
    expect(events.json()).toEqual({ object: "list", data: [], has_more: false, first_id: "", last_id: "" });
  });

  it("runs a job with nothing to train: started with 0 sequences, step+1 with the same weights, ended", async () => {
    t = await startTestApp(dialect, { worker: {} });
    const modelId = await registerModel(t, "m");
    await insertCheckpoint(t.store.db, { modelId, step: 3, files: { "adapter_model.safetensors": "a".repeat(64) } });
    const jobId = await createRlJob(t, modelId, [...flatGroups(), { trajectories: [trajectory(1)] }]);
    const job = await waitForJob(t, jobId, isTerminal);
    expect(job).toMatchObject({ status: "succeeded", step: 4, error_message: null });
    expect(job.started_at).toEqual(job.training_start);
    expect(Date.parse(job.ended_at as string)).toBeGreaterThanOrEqual(Date.parse(job.started_at as string));
    const events = await allEvents(t, jobId);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ["training_started", { num_sequences: 0 }],
      ["training_ended", {}],
    ]);
    const checkpoints = (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}/checkpoints?order=desc&limit=1` })).json();
    expect(checkpoints.data[0]).toMatchObject({ step: 4, metrics: {} });
    const row = await t.store.db.selectFrom("checkpoints").select("files").where("model_id", "=", modelId).where("step", "=", 4).executeTakeFirstOrThrow();
    expect(JSON.parse(row.files!)).toEqual({ "adapter_model.safetensors": "a".repeat(64) });
  });

  it("advances a model without checkpoints from the base weights to step 1", async () => {
    t = await startTestApp(dialect, { worker: {} });
    const modelId = await registerModel(t, "m");
    const jobId = await createRlJob(t, modelId, []);
    expect(await waitForJob(t, jobId, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    const row = await t.store.db.selectFrom("checkpoints").select(["step", "files"]).where("model_id", "=", modelId).executeTakeFirstOrThrow();
    expect(row).toEqual({ step: 1, files: null });
  });

  it("fails a job with something to train when no trainer is installed, with only training_failed", async () => {
    t = await startTestApp(dialect, { worker: {} });
    const modelId = await registerModel(t, "m");
    const jobId = await createRlJob(t, modelId, varyingGroups());
    const job = await waitForJob(t, jobId, isTerminal);
    expect(job.status).toBe("failed");
    expect(job.error_message).toMatch(/no trainer installed/);
    const events = await allEvents(t, jobId);
    expect(events).toEqual([{ id: expect.any(String), type: "training_failed", data: { error_message: job.error_message } }]);
    const checkpoints = (await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}/checkpoints` })).json();
    expect(checkpoints.data).toEqual([]);
  });

  it("runs one model's jobs one at a time in submission order, and different models' jobs side by side", async () => {
    t = await startTestApp(dialect, { worker: { stepDelayMs: 300, concurrency: 4 } });
    const first = await registerModel(t, "first");
    const second = await registerModel(t, "second");
    const firstJobs = [await createRlJob(t, first), await createRlJob(t, first), await createRlJob(t, first)];
    const otherJob = await createRlJob(t, second);

    const done = await Promise.all(firstJobs.map((id) => waitForJob(t, id, isTerminal)));
    expect(done.map((job) => [job.status, job.step])).toEqual([
      ["succeeded", 1],
      ["succeeded", 2],
      ["succeeded", 3],
    ]);
    const span = (job: Record<string, unknown>) => [Date.parse(job.started_at as string), Date.parse(job.ended_at as string)] as const;
    // Each job of `first` started only after the one before it ended...
    for (let i = 1; i < done.length; i++) expect(span(done[i]!)[0]).toBeGreaterThanOrEqual(span(done[i - 1]!)[1]);
    // ...while the other model's job ran during the first one.
    const other = await waitForJob(t, otherJob, isTerminal);
    expect(other.step).toBe(1);
    expect(span(other)[0]).toBeLessThan(span(done[0]!)[1]);
    expect(span(done[0]!)[0]).toBeLessThan(span(other)[1]);
  });

  it("cancels a queued job and a running one, each with exactly one training_failed and no checkpoint", async () => {
    t = await startTestApp(dialect, { worker: { stepDelayMs: 400 } });
    const modelId = await registerModel(t, "m");
    const running = await createRlJob(t, modelId);
    const queued = await createRlJob(t, modelId);
    while ((await allEvents(t, running)).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));

    for (const id of [queued, running]) {
      const res = await t.request(t.keys.alice, { method: "POST", url: `/v1/preview/training-jobs/${id}/cancel` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id, status: "cancelled", error_message: "Training job was cancelled", step: null });
      expect(res.json().ended_at).toEqual(expect.any(String));
    }
    // The worker lets go once its next write is refused for the lost lease.
    while (t.worker!.activeJobIds.includes(running)) await new Promise((resolve) => setTimeout(resolve, 20));
    const runningEvents = await allEvents(t, running);
    expect(runningEvents.map((e) => e.type)).toEqual(["training_started", "training_failed"]);
    expect(runningEvents[1]!.data).toEqual({ error_message: "Training job was cancelled" });
    expect((await allEvents(t, queued)).map((e) => e.type)).toEqual(["training_failed"]);
    expect((await t.request(t.keys.alice, { method: "GET", url: `/v1/preview/models/${modelId}/checkpoints` })).json().data).toEqual([]);

    const again = await t.request(t.keys.alice, { method: "POST", url: `/v1/preview/training-jobs/${running}/cancel` });
    expect(again.statusCode).toBe(409);
    expect(again.json().detail).toMatch(/already ended \(cancelled\)/);
    // The model's next job still runs.
    expect((await waitForJob(t, await createRlJob(t, modelId), isTerminal)).step).toBe(1);
  });

  it("gives a started job back as failed when its worker shuts down", async () => {
    t = await startTestApp(dialect, { worker: { stepDelayMs: 30_000 } });
    const modelId = await registerModel(t, "m");
    const jobId = await createRlJob(t, modelId);
    while ((await allEvents(t, jobId)).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await t.worker!.stop();
    const job = await waitForJob(t, jobId, () => true);
    expect(job).toMatchObject({ status: "failed", error_message: expect.stringMatching(/worker shut down after training had started/) });
    expect((await allEvents(t, jobId)).map((e) => e.type)).toEqual(["training_started", "training_failed"]);
  });

  it("pages events with after and limit, and rejects an unknown cursor", async () => {
    t = await startTestApp(dialect, { worker: {} });
    const modelId = await registerModel(t, "m");
    const jobId = await createRlJob(t, modelId);
    await waitForJob(t, jobId, isTerminal);
    const url = `/v1/preview/training-jobs/${jobId}/events`;
    const first = (await t.request(t.keys.alice, { method: "GET", url: `${url}?limit=1` })).json();
    expect(first).toMatchObject({ object: "list", has_more: true, data: [{ type: "training_started" }] });
    expect(first.first_id).toBe(first.data[0].id);
    const rest = (await t.request(t.keys.alice, { method: "GET", url: `${url}?after=${first.last_id}` })).json();
    expect(rest).toMatchObject({ has_more: false, data: [{ type: "training_ended" }] });
    const end = (await t.request(t.keys.alice, { method: "GET", url: `${url}?after=${rest.last_id}` })).json();
    expect(end).toEqual({ object: "list", data: [], has_more: false, first_id: "", last_id: "" });
    for (const [query, loc] of [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["after=00000000-0000-4000-8000-000000000000", "after"],
    ]) {
      const res = await t.request(t.keys.alice, { method: "GET", url: `${url}?${query}` });
      expect(res.statusCode, query).toBe(422);
      expect(res.json().detail[0].loc).toEqual(["query", loc]);
    }
    expect((await t.request(t.keys.alice, { method: "GET", url: "/v1/preview/training-jobs/nope/events" })).json().detail[0].loc).toEqual(["path", "training_job_id"]);
    expect((await t.request(t.keys.alice, { method: "GET", url: "/v1/preview/training-jobs/00000000-0000-4000-8000-000000000000" })).statusCode).toBe(404);
  });

  it("returns the same job for a repeated Idempotency-Key and 422 for a different body under it", async () => {
    t = await startTestApp(dialect);
    const modelId = await registerModel(t, "m");
    const body = { model_id: modelId, trajectory_groups: flatGroups() };
    const first = await post(body, { "idempotency-key": "step-7" });
    const again = await post(body, { "idempotency-key": "step-7" });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    const concurrent = await Promise.all([1, 2, 3].map(() => post(body, { "idempotency-key": "step-8" })));
    expect(new Set(concurrent.map((res) => res.json().id)).size).toBe(1);
    const other = await post({ ...body, trajectory_groups: flatGroups(3) }, { "idempotency-key": "step-7" });
    expect(other.statusCode).toBe(422);
    expect(other.json().detail[0]).toMatchObject({ loc: ["header", "idempotency-key"], type: "idempotency_key_reused" });
    const bad = await post(body, { "idempotency-key": "has space" });
    expect(bad.statusCode).toBe(422);
    expect((await post(body)).json().id).not.toBe(first.json().id);
    const count = await t.store.db
      .selectFrom("training_jobs")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(3);
    // Keys are per entity: bob's key of the same name is his own.
    const bobModel = await registerModel(t, "m", t.keys.bob);
    const bobs = await t.request(t.keys.bob, { method: "POST", url: "/v1/preview/training-jobs", payload: { ...body, model_id: bobModel }, headers: { "idempotency-key": "step-7" } });
    expect(bobs.statusCode).toBe(200);
    expect(bobs.json().id).not.toBe(first.json().id);
  });
});
