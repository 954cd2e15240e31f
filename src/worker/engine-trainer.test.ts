import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoraAdapter } from "../engine/lora/adapter.js";
import { loadLoraAdapter } from "../engine/lora/files.js";
import { createLoraAdapter } from "../engine/lora/init.js";
import { LoraTrainer } from "../engine/train/lora-trainer.js";
import { readOptimizerState } from "../engine/train/optimizer-file.js";
import type { TestApp } from "../testing/app.js";
import { loadTinyModel } from "../testing/models.js";
import { artChoice, type Completion, promptIds, sampleCompletion } from "../testing/sampled-choices.js";
import { testDialects } from "../testing/stores.js";
import { startTrainingApp, TINY_BASE_MODEL } from "../testing/trainer-app.js";
import { allEvents, createRlJob, isTerminal, waitForJob } from "../testing/training.js";

type Event = Awaited<ReturnType<typeof allEvents>>[number];

const model = loadTinyModel("qwen2");
const messages = [{ role: "user", content: "Name a color." }];
const prompt = promptIds(model, messages);
const scorer = new LoraTrainer(model.transformer, createLoraAdapter(model.config));

function completionLogprob(adapter: LoraAdapter | null, completion: Completion): number {
  const logprobs = scorer.sequenceLogprobs([...prompt, ...completion.tokens], { adapter }).logprobs;
  let total = 0;
  for (let p = prompt.length - 1; p < logprobs.length - 1; p++) total += logprobs[p]!;
  return total;
}

function expectWellFormed(events: Event[]): Record<string, number>[] {
  const [started, ...rest] = events;
  expect(started?.type).toBe("training_started");
  const steps = rest.slice(0, -1);
  expect(steps.every((event) => event.type === "gradient_step")).toBe(true);
  expect(steps).toHaveLength(started!.data.num_sequences as number);
  expect(rest.at(-1)?.type).toBe("training_ended");
  return steps.map((event) => event.data as Record<string, number>);
}

/** Issue 5 items 4–5: real RL and SFT jobs through the HTTP API, trained by the engine in trainer threads. */
describe.each(testDialects)("the engine trainer behind the job API on %s", (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTrainingApp(dialect);
  });
  afterAll(async () => {
    await t.close();
  });

  const register = async (name: string) => {
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name, base_model: TINY_BASE_MODEL } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().id as string;
  };
  const checkpointFiles = async (modelId: string, step: number) => {
    const row = await t.store.db.selectFrom("checkpoints").select("files").where("model_id", "=", modelId).where("step", "=", step).executeTakeFirstOrThrow();
    const files = JSON.parse(row.files!) as Record<string, string>;
    const blobs = t.app.services.blobs;
    return {
      adapter: { configFile: blobs.localPath(files["adapter_config.json"]!), weightsFile: blobs.localPath(files["adapter_model.safetensors"]!) },
      optimizerFile: blobs.localPath(files["optimizer.safetensors"]!),
    };
  };

  it("trains an SFT job from an uploaded artifact: the loss falls step by step, and the checkpoint is a PEFT adapter", async () => {
    const modelId = await register("sft");
    const rows = [
      {
        messages: [
          { role: "user", content: "ping" },
          { role: "assistant", content: "pong" },
        ],
      },
      {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hello" },
          { role: "assistant", content: "hello world" },
        ],
      },
    ];
    const text = `${Array.from({ length: 4 }, () => rows.map((row) => JSON.stringify(row)).join("\n")).join("\n")}\n`;
    const upload = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/artifacts", payload: { project: "p", name: "sft-data", files: [{ name: "train.jsonl", text }] } });
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, training_data_url: upload.json().url, config: { learning_rate: 1e-2 } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await waitForJob(t, res.json().id, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    const steps = expectWellFormed(await allEvents(t, res.json().id));
    expect(steps).toHaveLength(4);
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.loss).toBeLessThan(steps[i - 1]!.loss!);
    expect(steps[0]).toMatchObject({ learning_rate: 1e-2, num_trajectories: 2 });
    const { adapter, optimizerFile } = await checkpointFiles(modelId, 1);
    expect(loadLoraAdapter(adapter, model).config).toMatchObject({ rank: 8, alpha: 16, baseModelNameOrPath: TINY_BASE_MODEL });
    expect(readOptimizerState(optimizerFile)).toMatchObject({ step: 4, mode: "sft" });
  });

  it("trains RL jobs on sampled completions: rewarded ones gain logprob, and each job continues from the last checkpoint", async () => {
    const modelId = await register("rl");
    const completions = [0, 1, 2, 3].map((seed) => sampleCompletion(model, prompt, { seed: seed + 40, maxTokens: 10 }));
    const rewards = [1, 0, 0, 1];
    const groups = [{ trajectories: completions.map((completion, i) => ({ reward: rewards[i], messages_and_choices: [...messages, artChoice(model, completion)] })) }];
    const rewardedGain = (adapter: LoraAdapter) => completions.reduce((sum, completion, i) => sum + (rewards[i] ? 1 : -1) * (completionLogprob(adapter, completion) - completionLogprob(null, completion)), 0);

    const first = await createRlJob(t, modelId, groups, t.keys.alice, { experimental_config: { learning_rate: 5e-3 } });
    expect(await waitForJob(t, first, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    const [firstStep] = expectWellFormed(await allEvents(t, first));
    expect(firstStep).toMatchObject({ learning_rate: 5e-3, num_groups_submitted: 1, num_groups_trainable: 1, num_trajectories: 4 });
    expect(firstStep!.probs_corr).toBeCloseTo(1, 6);
    const afterFirst = rewardedGain(loadLoraAdapter((await checkpointFiles(modelId, 1)).adapter, model));
    expect(afterFirst).toBeGreaterThan(0.5);

    // The second job starts from step 1 (adapter and optimizer) and compares against the base weights (lag 1 → step 0).
    const second = await createRlJob(t, modelId, groups, t.keys.alice, { experimental_config: { learning_rate: 5e-3, kl_penalty_coef: 0.01, kl_penalty_step_lag: 1 } });
    expect(await waitForJob(t, second, isTerminal)).toMatchObject({ status: "succeeded", step: 2 });
    const [secondStep] = expectWellFormed(await allEvents(t, second));
    // k̄ = mean(ℓ − ℓ_ref) over the trained tokens: the step-1 policy differs from the base weights.
    expect(Math.abs(secondStep!.kl_policy_ref!)).toBeGreaterThan(1e-4);
    const { adapter, optimizerFile } = await checkpointFiles(modelId, 2);
    expect(readOptimizerState(optimizerFile)).toMatchObject({ step: 2, mode: "rl" });
    expect(rewardedGain(loadLoraAdapter(adapter, model))).toBeGreaterThan(afterFirst + 0.5);
  });

  it("fails a job on data the model cannot use with one training_failed that names the item, and keeps the weights", async () => {
    const modelId = await register("bad-data");
    const completions = [0, 1].map((seed) => sampleCompletion(model, prompt, { seed, maxTokens: 4 }));
    const choices = completions.map((completion) => artChoice(model, completion));
    choices[1]!.logprobs!.content![0]!.token = "token_id:999999";
    const jobId = await createRlJob(t, modelId, [{ trajectories: choices.map((choice, i) => ({ reward: i, messages_and_choices: [...messages, choice] })) }]);
    const job = await waitForJob(t, jobId, isTerminal);
    expect(job).toMatchObject({ status: "failed", error_message: expect.stringMatching(/^trajectory_groups\.0\.trajectories\.1: token id 999999 is outside the model's vocabulary/) });
    expect((await allEvents(t, jobId)).map((event) => event.type)).toEqual(["training_failed"]);
    expect(await t.store.db.selectFrom("checkpoints").selectAll().where("model_id", "=", modelId).execute()).toEqual([]);
  });

  it("fails a job whose base model cannot be loaded with the loader's message", async () => {
    const res = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/models", payload: { project: "p", name: "fake-base", base_model: "test/base" } });
    const completions = [0, 1].map((seed) => sampleCompletion(model, prompt, { seed, maxTokens: 4 }));
    const jobId = await createRlJob(t, res.json().id, [{ trajectories: completions.map((completion, i) => ({ reward: i, messages_and_choices: [...messages, artChoice(model, completion)] })) }]);
    expect(await waitForJob(t, jobId, isTerminal)).toMatchObject({ status: "failed", error_message: expect.stringMatching(/models\/test\/base\/config\.json: 'hidden_size' is missing/) });
  });

  it("stops a cancelled job between steps with one terminal event, and the model's next job trains", async () => {
    const modelId = await register("cancel");
    const row = JSON.stringify({
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
      ],
    });
    const upload = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/artifacts", payload: { project: "p", name: "long", files: [{ name: "train.jsonl", text: `${Array(2000).fill(row).join("\n")}\n` }] } });
    const sft = (url: string) => t.request(t.keys.alice, { method: "POST", url: "/v1/preview/sft-training-jobs", payload: { model_id: modelId, training_data_url: url, config: { learning_rate: 1e-3 } } });
    const long = (await sft(upload.json().url)).json().id as string;
    for (let i = 0; (await allEvents(t, long)).every((event) => event.type !== "gradient_step"); i++) {
      if (i > 2000) throw new Error("the job never stepped");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const cancel = await t.request(t.keys.alice, { method: "POST", url: `/v1/preview/training-jobs/${long}/cancel` });
    expect(cancel.json()).toMatchObject({ status: "cancelled" });
    const events = await allEvents(t, long);
    expect(events.filter((event) => event.type === "training_failed")).toEqual([expect.objectContaining({ data: { error_message: "Training job was cancelled" } })]);
    expect(events.at(-1)?.type).toBe("training_failed");

    const short = await t.request(t.keys.alice, { method: "POST", url: "/v1/preview/artifacts", payload: { project: "p", name: "short", files: [{ name: "train.jsonl", text: `${row}\n` }] } });
    const next = (await sft(short.json().url)).json().id as string;
    expect(await waitForJob(t, next, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    // Nothing more was recorded for the cancelled job once its worker noticed.
    expect((await allEvents(t, long)).at(-1)?.type).toBe("training_failed");
  });
});
