import type { InjectOptions } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { readModelConfig } from "../../engine/checkpoint/model-config.js";
import { adapterFiles, loadLoraAdapter } from "../../engine/lora/files.js";
import { createLoraAdapter } from "../../engine/lora/init.js";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { tinyModel } from "../../testing/models.js";
import { testDialects } from "../../testing/stores.js";
import { allEvents, createRlJob, flatGroups, isTerminal, registerModel, varyingGroups, waitForJob } from "../../testing/training.js";

/**
 * The worker protocol (/v1/worker) driven as an external trainer drives it, through the scenarios
 * the built-in worker's tests check on the same queue functions: claims per base model and in
 * model order, leases that expire and are taken back, one terminal event, cancellation fencing the
 * worker off, and a commit that makes a servable checkpoint.
 */
const POOL = "tiny/qwen2";

describe.each(testDialects)("worker protocol on %s", (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t?.close();
  });

  const start = async (env: Record<string, string> = { FLYWHEEL_PYTORCH_MODELS: POOL }, withBuiltInWorker = false) => {
    t = await startTestApp(dialect, { servedModels: { [POOL]: tinyModel("qwen2").dir }, env, ...(withBuiltInWorker ? { worker: {} } : {}) });
  };
  const worker = (options: InjectOptions, key = t.keys.worker) => t.request(key, options);
  const claim = async (name = "w1", baseModels = [POOL]) => {
    const res = await worker({ method: "POST", url: "/v1/worker/claim", payload: { worker: name, base_models: baseModels } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().job as { id: string; base_step: number; kind: string; model: { id: string; base_model: string } } | null;
  };
  const event = (jobId: string, type: string, data: Record<string, unknown>, name = "w1") => worker({ method: "POST", url: `/v1/worker/jobs/${jobId}/events`, payload: { worker: name, type, data } });
  const heartbeat = async (jobId: string, name = "w1") => (await worker({ method: "POST", url: `/v1/worker/jobs/${jobId}/heartbeat`, payload: { worker: name } })).json();
  const upload = async (jobId: string, name: string, bytes: Uint8Array, workerName = "w1") => {
    const res = await worker({ method: "PUT", url: `/v1/worker/jobs/${jobId}/files/${name}?worker=${workerName}`, payload: Buffer.from(bytes), headers: { "content-type": "application/octet-stream" } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().digest as string;
  };
  const commit = (jobId: string, files: Record<string, string> | null, name = "w1") => worker({ method: "POST", url: `/v1/worker/jobs/${jobId}/checkpoint`, payload: { worker: name, files } });
  const trainedAdapter = () => {
    const adapter = createLoraAdapter(readModelConfig(tinyModel("qwen2").dir), { seed: 7 });
    for (const module of adapter.modules()) module.b.fill(0.01);
    return adapterFiles(adapter);
  };

  it("accepts only worker keys, and worker keys nowhere else", async () => {
    await start();
    const byUser = await worker({ method: "POST", url: "/v1/worker/claim", payload: { worker: "w1", base_models: [POOL] } }, t.keys.alice);
    expect(byUser.statusCode).toBe(403);
    expect(byUser.json().detail).toMatch(/--role worker/);
    const publicByWorker = await t.request(t.keys.worker, { method: "GET", url: "/v1/preview/models" });
    expect(publicByWorker.statusCode).toBe(403);
    expect(publicByWorker.json().detail).toMatch(/worker key/);
    expect((await t.request(t.keys.worker, { method: "GET", url: "/v1/models" })).statusCode).toBe(403);
    expect((await t.app.inject({ method: "POST", url: "/v1/worker/claim", payload: { worker: "w1", base_models: [POOL] } })).statusCode).toBe(401);
    const bad = await worker({ method: "POST", url: "/v1/worker/claim", payload: { worker: "has space", base_models: [] } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([
      ["body", "worker"],
      ["body", "base_models"],
    ]);
    const paths = Object.keys((await t.app.inject({ method: "GET", url: "/openapi.json" })).json().paths);
    expect(paths).toEqual(expect.arrayContaining(["/v1/worker/claim", "/v1/worker/jobs/{job_id}/heartbeat", "/v1/worker/jobs/{job_id}/checkpoint", "/v1/worker/jobs/{job_id}/plan"]));
  });

  it("routes by base model: the pool's jobs go to workers only, the rest to the built-in worker; a pool job with no worker says so", async () => {
    await start({ FLYWHEEL_PYTORCH_MODELS: POOL }, true);
    const builtIn = await registerModel(t, "built-in");
    const pooled = await registerModel(t, "pooled", t.keys.alice, POOL);
    const builtInJob = await createRlJob(t, builtIn, flatGroups());
    const pooledJob = await createRlJob(t, pooled, flatGroups());
    expect(await waitForJob(t, builtInJob, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    const waiting = await waitForJob(t, pooledJob, (job) => job.status === "queued");
    expect(waiting.waiting_for).toMatch(/PyTorch worker for base model 'tiny\/qwen2'.*no worker for it has asked/);

    // A worker that asks for the built-in base model gets nothing; asking for the pool's, the job.
    expect(await claim("w1", ["test/base"])).toBeNull();
    const claimed = await claim("w1", [POOL, "test/base"]);
    expect(claimed).toMatchObject({ id: pooledJob, kind: "rl", base_step: 0, model: { id: pooled, base_model: POOL } });
    const read = await waitForJob(t, pooledJob, (job) => job.status === "running");
    expect(read.waiting_for).toBeNull();
  });

  it("trains a job end to end: plan, starting adapter, events in order, upload, one atomic commit", async () => {
    await start();
    const modelId = await registerModel(t, "m", t.keys.alice, POOL);
    const jobId = await createRlJob(t, modelId, varyingGroups(), t.keys.alice, { experimental_config: { learning_rate: 1e-5 } });
    const job = (await claim())!;
    expect(job.id).toBe(jobId);

    const plan = (await worker({ method: "GET", url: `/v1/worker/jobs/${jobId}/plan?worker=w1` })).json();
    expect(plan).toMatchObject({ job_id: jobId, kind: "rl", base_model: POOL, base_step: 0, kl_reference: null, rl: { loss: { objective: "cispo" }, precalculate_logprobs: false } });
    expect(plan.rl.steps).toHaveLength(1);
    const row = plan.rl.steps[0].row;
    expect(row.tokens.length).toBeGreaterThan(4);
    for (const key of ["group_ids", "parent_ids", "input_pos", "assistant_mask", "logprobs", "advantages", "weights"]) expect(row[key]).toHaveLength(row.tokens.length);
    expect(plan.rl.steps[0].learning_rate).toBe(1e-5);

    // The fresh adapter is the built-in trainer's: seeded by the model id, B zero.
    const config = await worker({ method: "GET", url: `/v1/worker/jobs/${jobId}/adapters/start/adapter_config.json?worker=w1` });
    expect(config.statusCode).toBe(200);
    expect(JSON.parse(config.body)).toMatchObject({ r: 8, lora_alpha: 16, peft_type: "LORA" });
    expect((await worker({ method: "GET", url: `/v1/worker/jobs/${jobId}/adapters/start/adapter_model.safetensors?worker=w1` })).rawPayload.length).toBeGreaterThan(1000);
    expect((await worker({ method: "GET", url: `/v1/worker/jobs/${jobId}/adapters/reference/adapter_config.json?worker=w1` })).statusCode).toBe(404);
    const files = (await worker({ method: "GET", url: `/v1/worker/base-models/files?base_model=${POOL}` })).json().files.map((f: { name: string }) => f.name);
    expect(files).toEqual(expect.arrayContaining(["config.json", "model.safetensors", "tokenizer.json"]));
    const configJson = await worker({ method: "GET", url: `/v1/worker/base-models/file?base_model=${POOL}&name=config.json` });
    expect(JSON.parse(configJson.body).model_type).toBe("qwen2");
    expect((await worker({ method: "GET", url: `/v1/worker/base-models/file?base_model=${POOL}&name=..%2Fsecret` })).statusCode).toBe(404);

    expect((await event(jobId, "training_started", { num_sequences: 1 })).statusCode).toBe(200);
    expect(await heartbeat(jobId)).toEqual({ owned: true, status: "running", message: null });
    expect((await event(jobId, "gradient_step", { loss: 0.5, grad_norm: 0.1, learning_rate: 1e-5 })).statusCode).toBe(200);

    const adapter = trainedAdapter();
    const digests: Record<string, string> = {};
    for (const [name, bytes] of Object.entries(adapter)) digests[name] = await upload(jobId, name, bytes);
    // A wrong adapter (another model's shapes) is refused, and the job keeps running.
    const wrong = adapterFiles(createLoraAdapter({ ...readModelConfig(tinyModel("qwen2").dir), hiddenSize: 8 }, { seed: 1 }));
    const wrongDigest = await upload(jobId, "adapter_model.safetensors", wrong["adapter_model.safetensors"]!);
    const refused = await commit(jobId, { ...digests, "adapter_model.safetensors": wrongDigest });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().detail[0].msg).toMatch(/does not fit base model/);
    expect((await commit(jobId, { "adapter_config.json": digests["adapter_config.json"]! })).statusCode).toBe(422);

    const committed = await commit(jobId, digests);
    expect(committed.json()).toEqual({ step: 1 });
    expect(await waitForJob(t, jobId, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    expect((await allEvents(t, jobId)).map((e) => [e.type, e.data])).toEqual([
      ["training_started", { num_sequences: 1 }],
      ["gradient_step", { loss: 0.5, grad_norm: 0.1, learning_rate: 1e-5 }],
      ["training_ended", {}],
    ]);
    const checkpoint = await t.store.db.selectFrom("checkpoints").select("files").where("model_id", "=", modelId).where("step", "=", 1).executeTakeFirstOrThrow();
    const stored = JSON.parse(checkpoint.files!) as Record<string, string>;
    expect(stored).toEqual(digests);
    const loaded = loadLoraAdapter({ configFile: t.blobs.localPath(stored["adapter_config.json"]!), weightsFile: t.blobs.localPath(stored["adapter_model.safetensors"]!) }, { config: readModelConfig(tinyModel("qwen2").dir) });
    expect(loaded.modules()[0]!.b[0]).toBeCloseTo(0.01, 6);
    // The lease is gone with the job: nothing more is accepted.
    expect((await event(jobId, "gradient_step", { loss: 1 })).statusCode).toBe(409);
    expect(await heartbeat(jobId)).toMatchObject({ owned: false, status: "succeeded" });

    // The next job of the model starts from that checkpoint.
    const next = await createRlJob(t, modelId, varyingGroups());
    expect(await claim()).toMatchObject({ id: next, base_step: 1 });
    const startWeights = await worker({ method: "GET", url: `/v1/worker/jobs/${next}/adapters/start/adapter_model.safetensors?worker=w1` });
    expect(Buffer.compare(startWeights.rawPayload, Buffer.from(adapter["adapter_model.safetensors"]!))).toBe(0);
  });

  it("holds a worker to the trainer protocol's order: a violation fails the job with one terminal event", async () => {
    await start();
    const modelId = await registerModel(t, "m", t.keys.alice, POOL);
    const a = await createRlJob(t, modelId, varyingGroups());
    await claim();
    const early = await event(a, "gradient_step", { loss: 1 });
    expect(early.statusCode).toBe(409);
    expect(early.json().detail).toMatch(/trainer protocol error: a gradient step before started; the job has failed/);
    expect(await waitForJob(t, a, isTerminal)).toMatchObject({ status: "failed", error_message: "trainer protocol error: a gradient step before started" });

    const b = await createRlJob(t, modelId, varyingGroups());
    await claim();
    await event(b, "training_started", { num_sequences: 2 });
    await event(b, "gradient_step", { loss: 1, grad_norm: 0.5 });
    const tooEarly = await commit(b, null);
    expect(tooEarly.statusCode).toBe(409);
    expect(await waitForJob(t, b, isTerminal)).toMatchObject({ status: "failed", error_message: "trainer protocol error: finished after 1 of 2 gradient steps" });
    expect((await allEvents(t, b)).map((e) => e.type)).toEqual(["training_started", "gradient_step", "training_failed"]);

    const c = await createRlJob(t, modelId, varyingGroups());
    await claim();
    await event(c, "training_started", { num_sequences: 0 });
    expect((await commit(c, null)).json()).toEqual({ step: 1 });
    expect(await waitForJob(t, c, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
  });

  it("runs one job per model at a time, in submission order, and gives each job to one worker", async () => {
    await start();
    const [m1, m2] = [await registerModel(t, "m1", t.keys.alice, POOL), await registerModel(t, "m2", t.keys.bob, POOL)];
    const a1 = await createRlJob(t, m1, flatGroups());
    const a2 = await createRlJob(t, m1, flatGroups());
    const b1 = await createRlJob(t, m2, flatGroups(), t.keys.bob);
    const claims = await Promise.all(["w1", "w2", "w3"].map((name) => claim(name)));
    expect(
      claims
        .filter(Boolean)
        .map((job) => job!.id)
        .sort(),
    ).toEqual([a1, b1].sort());
    const holder = ["w1", "w2", "w3"][claims.findIndex((job) => job?.id === a1)]!;
    // Another worker cannot write to a job it does not hold.
    const intruder = holder === "w1" ? "w2" : "w1";
    expect((await event(a1, "training_started", { num_sequences: 0 }, intruder)).statusCode).toBe(409);
    expect(await claim("w4")).toBeNull();
    await event(a1, "training_started", { num_sequences: 0 }, holder);
    expect((await commit(a1, null, holder)).statusCode).toBe(200);
    expect(await claim("w4")).toMatchObject({ id: a2, base_step: 1 });
  });

  it("cancellation fences the worker off: the heartbeat says so, writes are refused, one terminal event", async () => {
    await start();
    const modelId = await registerModel(t, "m", t.keys.alice, POOL);
    const jobId = await createRlJob(t, modelId, varyingGroups());
    await claim();
    await event(jobId, "training_started", { num_sequences: 1 });
    const cancel = await t.request(t.keys.alice, { method: "POST", url: `/v1/preview/training-jobs/${jobId}/cancel` });
    expect(cancel.statusCode).toBe(200);
    expect(await heartbeat(jobId)).toMatchObject({ owned: false, status: "cancelled" });
    expect((await event(jobId, "gradient_step", { loss: 1 })).statusCode).toBe(409);
    const digest = await t.blobs.put(new Uint8Array([1]));
    const late = await commit(jobId, { "adapter_config.json": digest, "adapter_model.safetensors": digest });
    expect(late.statusCode).toBe(409);
    expect(late.json().detail).toMatch(/no longer holds .* cancelled/);
    expect((await allEvents(t, jobId)).map((e) => e.type)).toEqual(["training_started", "training_failed"]);
    expect(await t.store.db.selectFrom("checkpoints").selectAll().where("model_id", "=", modelId).execute()).toEqual([]);
  });

  it("takes back expired leases: a job without events is claimed again, one that had started fails", async () => {
    await start({ FLYWHEEL_PYTORCH_MODELS: POOL, FLYWHEEL_JOB_MAX_ATTEMPTS: "2" });
    const expire = (jobId: string) => t.store.db.updateTable("training_jobs").set({ lease_expires_at: "2000-01-01T00:00:00.000Z" }).where("id", "=", jobId).execute();
    const [m1, m2] = [await registerModel(t, "m1", t.keys.alice, POOL), await registerModel(t, "m2", t.keys.alice, POOL)];
    const quiet = await createRlJob(t, m1, varyingGroups());
    expect((await claim("w1"))!.id).toBe(quiet);
    await expire(quiet);
    expect(await claim("w2")).toMatchObject({ id: quiet });
    expect(await heartbeat(quiet, "w1")).toMatchObject({ owned: false, status: "running" });
    expect((await t.store.db.selectFrom("training_jobs").select("attempts").where("id", "=", quiet).executeTakeFirstOrThrow()).attempts).toBe(2);
    await expire(quiet);
    expect(await claim("w3")).toBeNull(); // attempts exhausted: failed, not queued again
    expect(await waitForJob(t, quiet, isTerminal)).toMatchObject({ status: "failed", error_message: expect.stringMatching(/attempted 2 times/) });

    const started = await createRlJob(t, m2, varyingGroups());
    await claim("w1");
    await event(started, "training_started", { num_sequences: 1 });
    await expire(started);
    expect(await claim("w2")).toBeNull();
    expect(await waitForJob(t, started, isTerminal)).toMatchObject({ status: "failed", error_message: expect.stringMatching(/after training had started/) });
    expect((await allEvents(t, started)).map((e) => e.type)).toEqual(["training_started", "training_failed"]);
  });

  it("gives a job back on shutdown, and fails one on the worker's word", async () => {
    await start();
    const modelId = await registerModel(t, "m", t.keys.alice, POOL);
    const jobId = await createRlJob(t, modelId, varyingGroups());
    await claim();
    const released = await worker({ method: "POST", url: `/v1/worker/jobs/${jobId}/release`, payload: { worker: "w1" } });
    expect(released.json()).toEqual({ outcome: "requeued" });
    expect(await claim("w2")).toMatchObject({ id: jobId });
    const failed = await worker({ method: "POST", url: `/v1/worker/jobs/${jobId}/fail`, payload: { worker: "w2", message: "CUDA out of memory" } });
    expect(failed.statusCode).toBe(200);
    expect(await waitForJob(t, jobId, isTerminal)).toMatchObject({ status: "failed", error_message: "CUDA out of memory" });
    expect((await worker({ method: "POST", url: `/v1/worker/jobs/${jobId}/release`, payload: { worker: "w2" } })).statusCode).toBe(409);
    expect((await worker({ method: "POST", url: `/v1/worker/jobs/nope/heartbeat`, payload: { worker: "w2" } })).statusCode).toBe(404);
  });

  it("fails a job whose data cannot be planned, as the built-in trainer would", async () => {
    await start();
    const modelId = await registerModel(t, "m", t.keys.alice, POOL);
    const bad = [
      {
        trajectories: [0, 1].map((reward) => ({
          messages_and_choices: [
            { role: "user", content: "hi" },
            { finish_reason: "stop", index: 0, logprobs: { content: [{ token: "token_id:999999", bytes: [1], logprob: -1, top_logprobs: [] }] }, message: { role: "assistant", content: "x" } },
          ],
          reward,
        })),
        exceptions: [],
      },
    ];
    const jobId = await createRlJob(t, modelId, bad);
    await claim();
    const plan = await worker({ method: "GET", url: `/v1/worker/jobs/${jobId}/plan?worker=w1` });
    expect(plan.statusCode).toBe(409);
    expect(plan.json().detail).toMatch(/outside the model's vocabulary/);
    expect(await waitForJob(t, jobId, isTerminal)).toMatchObject({ status: "failed" });
  });
});
