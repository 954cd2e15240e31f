import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../testing/app.js";
import { testDialects } from "../testing/stores.js";
import { allEvents, createRlJob, isTerminal, registerModel, varyingGroups, waitForJob } from "../testing/training.js";
import { openRunWork } from "./job-work-in-thread.js";
import type { Trainer, TrainerUpdate, TrainingRun } from "./trainer.js";

/**
 * The runner's side of the Trainer contract. The trainers here are scripted test doubles that
 * replay fixed update sequences: they check how the runner records, stores and polices what a
 * trainer reports; they do not train anything.
 */
function scripted(updates: TrainerUpdate[] | ((run: TrainingRun) => TrainerUpdate[]), options: { throwAfter?: number } = {}): Trainer & { runs: TrainingRun[] } {
  const runs: TrainingRun[] = [];
  return {
    runs,
    async *train(run) {
      runs.push(run);
      const list = typeof updates === "function" ? updates(run) : updates;
      for (let index = 0; index < list.length; index++) {
        if (options.throwAfter === index) throw new Error("CUDA out of memory (scripted)");
        yield list[index]!;
      }
    },
  };
}

describe.each(testDialects)("job runner with a trainer on %s", (dialect) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it("records started, each gradient step and the new adapter as checkpoint step+1", async () => {
    const adapter = { "adapter_config.json": new TextEncoder().encode('{"r": 8}'), "adapter_model.safetensors": new Uint8Array([1, 2, 3]) };
    const trainer = scripted([
      { type: "started", numSequences: 2 },
      { type: "gradient_step", metrics: { loss: 0.5, grad_norm: 1.25, learning_rate: 5e-6 } },
      { type: "gradient_step", metrics: { loss: 0.25, grad_norm: Number.NaN, learning_rate: 5e-6 } },
      { type: "finished", adapter },
    ]);
    t = await startTestApp(dialect, { worker: { trainer } });
    const modelId = await registerModel(t, "m");
    const jobId = await createRlJob(t, modelId, varyingGroups(), t.keys.alice, { experimental_config: { learning_rate: 1e-5, kl_penalty_coef: 0.2 } });
    expect(await waitForJob(t, jobId, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    expect((await allEvents(t, jobId)).map((e) => [e.type, e.data])).toEqual([
      ["training_started", { num_sequences: 2 }],
      ["gradient_step", { loss: 0.5, grad_norm: 1.25, learning_rate: 5e-6 }],
      ["gradient_step", { loss: 0.25, learning_rate: 5e-6 }], // NaN cannot travel as JSON
      ["training_ended", {}],
    ]);
    const row = await t.store.db.selectFrom("checkpoints").select("files").where("model_id", "=", modelId).executeTakeFirstOrThrow();
    const files = JSON.parse(row.files!) as Record<string, string>;
    expect(Object.keys(files).sort()).toEqual(["adapter_config.json", "adapter_model.safetensors"]);
    const blobs = t.app.services.blobs;
    expect(new Uint8Array(await blobs.get(files["adapter_model.safetensors"]!))).toEqual(new Uint8Array([1, 2, 3]));

    const [run] = trainer.runs;
    expect(run).toMatchObject({ jobId, from: { step: 0, files: null }, klReference: { step: null, files: null }, model: { id: modelId, baseModel: "test/base" } });
    expect(run!.servedBaseModel?.id).toBe("test/base");
    expect(run!.work).toMatchObject({ kind: "rl", config: { learning_rate: 1e-5, kl_penalty_coef: 0.2 } });
  });

  it("trains the next job from the checkpoint the previous one committed", async () => {
    const trainer = scripted([
      { type: "started", numSequences: 0 },
      { type: "finished", adapter: { "adapter_model.safetensors": new Uint8Array([9]) } },
    ]);
    t = await startTestApp(dialect, { worker: { trainer } });
    const modelId = await registerModel(t, "m");
    const jobs = [await createRlJob(t, modelId, varyingGroups()), await createRlJob(t, modelId, varyingGroups())];
    for (const id of jobs) await waitForJob(t, id, isTerminal);
    expect(trainer.runs.map((run) => run.from.step)).toEqual([0, 1]);
    expect(trainer.runs[1]!.from.files).toEqual({ "adapter_model.safetensors": expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it("hands an SFT job its rows, resolved config and metadata", async () => {
    const trainer = scripted((run) => [
      { type: "started", numSequences: run.work.kind === "sft" ? run.work.config.learning_rates.length : -1 },
      { type: "gradient_step", metrics: { loss: 2 } },
      { type: "gradient_step", metrics: { loss: 1 } },
      { type: "finished", adapter: null },
    ]);
    t = await startTestApp(dialect, { worker: { trainer } });
    const modelId = await registerModel(t, "m");
    const line = JSON.stringify({
      messages: [
        { role: "user", content: "Q" },
        { role: "assistant", content: null },
      ],
      tools: [{ type: "function", function: { name: "f" } }],
    });
    const upload = await t.request(t.keys.alice, {
      method: "POST",
      url: "/v1/preview/artifacts",
      payload: {
        project: "proj",
        name: "sft",
        files: [
          { name: "train.jsonl", text: `${line}\n${line}\n${line}\n` },
          { name: "metadata.json", text: '{"num_trajectories": 3}' },
        ],
      },
    });
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, training_data_url: upload.json().url, config: { learning_rate: [2e-4, 1e-4] } } });
    const job = await waitForJob(t, res.json().id, isTerminal);
    expect(job).toMatchObject({ kind: "sft", status: "succeeded", step: 1 });
    expect((await allEvents(t, job.id as string)).map((e) => e.type)).toEqual(["training_started", "gradient_step", "gradient_step", "training_ended"]);
    const work = openRunWork(trainer.runs[0]!.work);
    expect(work.kind).toBe("sft");
    if (work.kind !== "sft") return;
    expect(work.rows).toHaveLength(3);
    expect(work.rows[0]).toEqual({
      messages: [
        { role: "user", content: "Q" },
        { role: "assistant", content: "" },
      ],
      tools: [{ type: "function", function: { name: "f" } }],
    });
    expect(work.config).toMatchObject({ batch_size: 2, learning_rates: [2e-4, 1e-4], assistant_turns: "all" });
    expect(work.metadata).toEqual({ num_trajectories: 3 });
  });

  it.each([
    ["a gradient step before started", [{ type: "gradient_step", metrics: {} }], /before started/, []],
    [
      "more steps than announced",
      [
        { type: "started", numSequences: 1 },
        { type: "gradient_step", metrics: {} },
        { type: "gradient_step", metrics: {} },
      ],
      /more than the announced 1/,
      ["training_started", "gradient_step"],
    ],
    [
      "finishing early",
      [
        { type: "started", numSequences: 2 },
        { type: "finished", adapter: null },
      ],
      /finished after 0 of 2/,
      ["training_started"],
    ],
    ["ending without finishing", [{ type: "started", numSequences: 0 }], /ended without finishing/, ["training_started"]],
  ] as [string, TrainerUpdate[], RegExp, string[]][])("fails the job on a trainer protocol error: %s", async (_name, updates, message, before) => {
    t = await startTestApp(dialect, { worker: { trainer: scripted(updates) } });
    const modelId = await registerModel(t, "m");
    const jobId = await createRlJob(t, modelId, varyingGroups());
    const job = await waitForJob(t, jobId, isTerminal);
    expect(job.status).toBe("failed");
    expect(job.error_message).toMatch(message);
    expect((await allEvents(t, jobId)).map((e) => e.type)).toEqual([...before, "training_failed"]);
  });

  it("reports a trainer's own error as training_failed and keeps the old weights", async () => {
    const trainer = scripted(
      [
        { type: "started", numSequences: 1 },
        { type: "gradient_step", metrics: { loss: 1 } },
      ],
      { throwAfter: 1 },
    );
    t = await startTestApp(dialect, { worker: { trainer } });
    const modelId = await registerModel(t, "m");
    const jobId = await createRlJob(t, modelId, varyingGroups());
    expect(await waitForJob(t, jobId, isTerminal)).toMatchObject({ status: "failed", error_message: "CUDA out of memory (scripted)" });
    const events = await allEvents(t, jobId);
    expect(events.map((e) => e.type)).toEqual(["training_started", "training_failed"]);
    expect(await t.store.db.selectFrom("checkpoints").selectAll().execute()).toEqual([]);
  });
});
