import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import type { ChatCompletion } from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readModelConfig } from "../../engine/checkpoint/model-config.js";
import { adapterFiles, loadLoraAdapter } from "../../engine/lora/files.js";
import type { LoraAdapter } from "../../engine/lora/adapter.js";
import { createLoraAdapter } from "../../engine/lora/init.js";
import { startTestApp, type TestApp } from "../../testing/app.js";
import { tinyModel } from "../../testing/models.js";
import { testPython } from "../../testing/python-env.js";
import { makeTempDir, testDialects } from "../../testing/stores.js";
import { allEvents, isTerminal, sampledChoice, trajectory, waitForJob } from "../../testing/training.js";

/**
 * The PyTorch trainer (python/flywheel_trainer) as a worker of a running server: it claims jobs of
 * the PyTorch pool's base model over the worker protocol, trains them with transformers + PEFT and
 * commits adapters that the engine serves at once; under torchrun, two gloo ranks train a job to the
 * same adapter as one rank.
 */
const POOL = "tiny/qwen2";
const pythonRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "python");
const dialect = testDialects[0]!;

describe(`the PyTorch trainer as a worker (${dialect})`, () => {
  let t: TestApp;
  let address: string;
  let client: OpenAI;
  let python: string;
  const cacheDir = makeTempDir("flywheel-pytorch-worker-");

  beforeAll(async () => {
    python = testPython();
    t = await startTestApp(dialect, { servedModels: { [POOL]: tinyModel("qwen2").dir }, env: { FLYWHEEL_PYTORCH_MODELS: POOL }, worker: {} });
    address = await t.app.listen({ port: 0, host: "127.0.0.1" });
    client = new OpenAI({ baseURL: `${address}/v1`, apiKey: t.keys.alice, maxRetries: 0 });
  }, 900_000);
  afterAll(async () => {
    await t?.close();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  });

  /** Runs the trainer until it has done `jobs` jobs; one rank, or `ranks` under torchrun (gloo on the CPU). */
  const runTrainer = (jobs: number, ranks = 1): Promise<string> => {
    const args = ["--server", address, "--key", t.keys.worker, "--base-model", POOL, "--cache-dir", cacheDir, "--max-jobs", String(jobs), "--poll-seconds", "0.2"];
    const [command, commandArgs] =
      ranks === 1 ? [python, ["-m", "flywheel_trainer", ...args]] : [path.join(path.dirname(python), "torchrun"), ["--standalone", "--nproc-per-node", String(ranks), "-m", "flywheel_trainer", ...args]];
    return new Promise((resolve, reject) => {
      const child = spawn(command, commandArgs, { cwd: pythonRoot, env: { ...process.env, OMP_NUM_THREADS: "1" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      // A hung trainer fails the test with its log instead of holding it until the test times out.
      const deadline = setTimeout(() => process.kill(-child.pid!, "SIGTERM"), 240_000);
      child.on("error", reject);
      child.on("close", (status) => {
        clearTimeout(deadline);
        if (status === 0) resolve(output);
        else reject(new Error(`the trainer exited with ${status}:\n${output.slice(-6000)}`));
      });
    });
  };
  const createModel = async (name: string) => (await client.post<{ id: string }>("/preview/models", { body: { project: "p", name, base_model: POOL } })).id;
  const sftRows = (count: number) =>
    Array.from({ length: count }, (_, i) =>
      JSON.stringify({
        messages: [
          { role: "user", content: "Name a color." },
          { role: "assistant", content: ["blue, like the sky", "green grass", "red roses", "gold"][i % 4] },
        ],
      }),
    ).join("\n");
  const sftJob = async (modelId: string, rows: number, learningRate: number, batchSize: number) => {
    const upload = await client.post<{ url: string }>("/preview/artifacts", { body: { project: "p", name: `data-${modelId}`, files: [{ name: "train.jsonl", text: `${sftRows(rows)}\n` }] } });
    return (await client.post<{ id: string }>("/preview/sft-training-jobs", { body: { model_id: modelId, training_data_url: upload.url, config: { learning_rate: learningRate, batch_size: batchSize } } })).id;
  };
  const rlJob = async (modelId: string) => {
    const answer = (content: string, ids: number[], reward: number) => trajectory(reward, { messages_and_choices: [{ role: "user", content: "Name a color." }, sampledChoice(content, ids)] });
    const groups = [
      { trajectories: [answer("red", [101, 102, 103], 1), answer("blue", [104, 105], 0), answer("green", [106, 107, 108], 0.5)], exceptions: [] },
      { trajectories: [answer("one", [201, 202], 0), answer("two", [203, 204, 205], 1)], exceptions: [] },
    ];
    return (await client.post<{ id: string }>("/preview/training-jobs", { body: { model_id: modelId, trajectory_groups: groups, experimental_config: { learning_rate: 1e-3, loss_fn: "ppo" } } })).id;
  };
  const adapterAt = async (modelId: string, step: number): Promise<LoraAdapter> => {
    const row = await t.store.db.selectFrom("checkpoints").select("files").where("model_id", "=", modelId).where("step", "=", step).executeTakeFirstOrThrow();
    const files = JSON.parse(row.files!) as Record<string, string>;
    expect(Object.keys(files).sort()).toEqual(["adapter_config.json", "adapter_model.safetensors", "optimizer.safetensors"]);
    return loadLoraAdapter({ configFile: t.blobs.localPath(files["adapter_config.json"]!), weightsFile: t.blobs.localPath(files["adapter_model.safetensors"]!) }, { config: readModelConfig(tinyModel("qwen2").dir) });
  };
  const greedy = (model: string) => client.chat.completions.create({ model, messages: [{ role: "user", content: "Name a color." }], temperature: 0, max_completion_tokens: 6, logprobs: true, seed: 1 });
  const logprobsOf = (completion: ChatCompletion) => completion.choices[0]!.logprobs!.content!.map((entry) => [entry.token, entry.logprob]);

  it("trains an SFT job and an RL job with Flywheel's events; the engine serves each new checkpoint at once", async () => {
    const modelId = await createModel("served");
    const sft = await sftJob(modelId, 4, 2e-2, 2);
    const rl = await rlJob(modelId);
    const waiting = await waitForJob(t, sft, (job) => job.status === "queued");
    expect(waiting.waiting_for).toMatch(/no worker for it has asked/);
    const before = await greedy("wandb-artifact:///alice/p/served");

    const log = await runTrainer(2);
    expect(log).toMatch(/committed step 2/);
    expect(await waitForJob(t, sft, isTerminal)).toMatchObject({ status: "succeeded", step: 1 });
    expect(await waitForJob(t, rl, isTerminal)).toMatchObject({ status: "succeeded", step: 2 });
    const sftEvents = await allEvents(t, sft);
    expect(sftEvents.map((e) => e.type)).toEqual(["training_started", "gradient_step", "gradient_step", "training_ended"]);
    expect(sftEvents[0]!.data).toEqual({ num_sequences: 2 });
    expect(Object.keys(sftEvents[1]!.data).sort()).toEqual(["grad_norm", "learning_rate", "loss", "num_tokens", "num_trainable_tokens", "num_trajectories", "tokens_per_second"]);
    const rlEvents = await allEvents(t, rl);
    expect(rlEvents.at(-1)!.type).toBe("training_ended");
    expect(rlEvents[1]!.data).toMatchObject({ loss: expect.any(Number), entropy: expect.any(Number), grad_norm: expect.any(Number), learning_rate: expect.any(Number), num_groups_submitted: 2 });

    // Served at once, by name, and different from the base weights.
    const step1 = await greedy("wandb-artifact:///alice/p/served:step1");
    const step2 = await greedy("wandb-artifact:///alice/p/served:step2");
    expect(logprobsOf(step1)).not.toEqual(logprobsOf(before));
    expect(logprobsOf(step2)).not.toEqual(logprobsOf(step1));
    expect((await adapterAt(modelId, 2)).modules().length).toBe(14);
  }, 600_000);

  it("trains one job on two torchrun ranks (gloo) to the adapter one rank trains", async () => {
    // Both models start from the same imported adapter, so their jobs train the same weights.
    const start = createLoraAdapter(readModelConfig(tinyModel("qwen2").dir), { seed: 5 });
    for (const module of start.modules()) for (let i = 0; i < module.b.length; i++) module.b[i] = Math.sin(i + module.layer) * 0.02;
    const files = Object.entries(adapterFiles(start)).map(([name, bytes]) => ({ name, base64: Buffer.from(bytes).toString("base64") }));
    const artifact = await client.post<{ url: string }>("/preview/artifacts", { body: { project: "p", name: "start-adapter", type: "lora", files } });
    const [one, two] = [await createModel("one-rank"), await createModel("two-ranks")];
    for (const id of [one, two]) await client.post(`/preview/models/${id}/checkpoints/import`, { body: { artifact_url: artifact.url } });
    // An SFT step (rows dealt out to the ranks), then an RL step (results dealt out to the ranks).
    const jobsOne = [await sftJob(one, 4, 1e-3, 4), await rlJob(one)];
    await runTrainer(2);
    const jobsTwo = [await sftJob(two, 4, 1e-3, 4), await rlJob(two)];
    const log = await runTrainer(2, 2);
    expect(log).toMatch(/committed step 2/);
    for (const job of [...jobsOne, ...jobsTwo]) expect(await waitForJob(t, job, isTerminal)).toMatchObject({ status: "succeeded" });
    for (const step of [1, 2]) {
      const [a, b, before] = [await adapterAt(one, step), await adapterAt(two, step), step === 1 ? start : await adapterAt(one, step - 1)];
      let moved = 0;
      let difference = 0;
      a.parameters().forEach((tensor, i) => {
        const other = b.parameters()[i]!;
        const initial = before.parameters()[i]!;
        for (let j = 0; j < tensor.length; j++) {
          moved = Math.max(moved, Math.abs(tensor[j]! - initial[j]!));
          difference = Math.max(difference, Math.abs(tensor[j]! - other[j]!));
        }
      });
      expect(moved, `step ${step}`).toBeGreaterThan(5e-4); // each step changed the weights by about its learning rate
      // 1% of a step's update: the ranks sum float32 gradients in another order, and the RL jobs pack
      // their results in another order (each job's shuffle is seeded by its id), which AdamW's
      // normalisation turns into differences of a few 1e-7 on weights whose gradient is near zero.
      expect(difference, `step ${step}`).toBeLessThan(1e-5);
    }
    for (const index of [0, 1]) {
      const [lossOne, lossTwo] = [(await allEvents(t, jobsOne[index]!))[1]!.data.loss as number, (await allEvents(t, jobsTwo[index]!))[1]!.data.loss as number];
      expect(Math.abs(lossOne - lossTwo)).toBeLessThan(1e-5);
    }
  }, 600_000);
});
