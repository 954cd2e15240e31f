/**
 * Training-job benchmark: whole jobs through the trainer thread, as the job worker runs them, on a
 * qwen2-shaped fixture (hidden 256, 4 layers; BENCH_HIDDEN / BENCH_LAYERS change it) with a rank-8
 * LoRA on all linear layers, on the TypeScript kernels. Prints each job's steps (loss, reward) and
 * seconds: an SFT job (16 conversations, batches of 2) and RL jobs on completions sampled from the
 * current checkpoint (8 groups of 8, 24 tokens each), rewarded for tokens that start with a vowel.
 * Run with `npx tsx bench/train-jobs.ts`. Not a test: numbers depend on the machine and its load.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeTinyModel } from "../src/engine/fixtures/tiny-model.js";
import { TsKernels } from "../src/engine/kernels/ts/index.js";
import { loadLoraAdapter } from "../src/engine/lora/files.js";
import { loadModel } from "../src/engine/model/load.js";
import { resolveRlConfig } from "../src/engine/train/config.js";
import type { AdapterFiles, TrainerUpdate, TrainingJobSpec } from "../src/engine/train/job/types.js";
import { resolveSftConfig } from "../src/engine/train/sft-config.js";
import { TrainerThreads } from "../src/engine/train/thread/trainer-threads.js";
import { artChoice, promptIds, sampleCompletion } from "../src/testing/sampled-choices.js";

const HIDDEN = Number(process.env.BENCH_HIDDEN ?? 256);
const LAYERS = Number(process.env.BENCH_LAYERS ?? 4);
const RL_JOBS = Number(process.env.BENCH_RL_JOBS ?? 3);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-bench-jobs-"));
const threads = new TrainerThreads({ idleMs: 60_000 });
try {
  const modelDir = path.join(dir, "model");
  makeTinyModel(modelDir, { architecture: "qwen2", hiddenSize: HIDDEN, numLayers: LAYERS, numHeads: 8, numKvHeads: 4, intermediateSize: Math.round((HIDDEN * 11) / 4), maxPositionEmbeddings: 4096 });
  const model = loadModel(modelDir, { kernels: new TsKernels() });
  console.log(`qwen2 fixture: hidden ${HIDDEN}, ${LAYERS} layers, vocab ${model.config.vocabSize}; TypeScript kernels; ${os.cpus().length} CPUs`);

  const run = async (spec: TrainingJobSpec) => {
    const started = performance.now();
    const updates: TrainerUpdate[] = [];
    for await (const update of threads.run(modelDir, spec, new AbortController().signal)) updates.push(update);
    return { updates, seconds: (performance.now() - started) / 1000 };
  };
  const save = (updates: TrainerUpdate[], name: string): AdapterFiles => {
    const finished = updates.at(-1)!;
    if (finished.type !== "finished" || !finished.adapter) throw new Error("nothing trained");
    const out = path.join(dir, name);
    fs.mkdirSync(out);
    for (const [file, bytes] of Object.entries(finished.adapter)) fs.writeFileSync(path.join(out, file), bytes);
    return { configFile: path.join(out, "adapter_config.json"), weightsFile: path.join(out, "adapter_model.safetensors"), optimizerFile: path.join(out, "optimizer.safetensors") };
  };
  const steps = (updates: TrainerUpdate[]) => updates.flatMap((update) => (update.type === "gradient_step" ? [update.metrics] : []));

  // SFT: the same 16 conversations; the loss of each batch is measured before its step.
  const answers = ["The sky is blue because air scatters short wavelengths more strongly.", "Paris is the capital of France.", "Two plus two is four.", "Water boils at one hundred degrees Celsius at sea level."];
  const rows = Array.from({ length: 16 }, (_, i) => ({
    messages: [
      { role: "user", content: `Question ${i % 4}?` },
      { role: "assistant", content: answers[i % 4] },
    ],
  }));
  const sft = await run({
    jobId: "bench-sft",
    from: null,
    newAdapter: { seed: 1, baseModelNameOrPath: "bench" },
    work: { kind: "sft", rows, fileName: "train.jsonl", config: resolveSftConfig({ learning_rate: 2e-3 }, rows.length) },
  });
  console.log(`SFT job (first job of the thread: includes loading the model): ${sft.seconds.toFixed(2)} s, ${steps(sft.updates).length} steps`);
  console.log(
    `  loss per step: ${steps(sft.updates)
      .map((metrics) => metrics.loss!.toFixed(3))
      .join(" → ")}`,
  );
  const sftAgain = await run({
    jobId: "bench-sft-2",
    from: save(sft.updates, "sft"),
    newAdapter: { seed: 1, baseModelNameOrPath: "bench" },
    work: { kind: "sft", rows, fileName: "train.jsonl", config: resolveSftConfig({ learning_rate: 2e-3 }, rows.length) },
  });
  console.log(
    `SFT job from that checkpoint (model loaded): ${sftAgain.seconds.toFixed(2)} s; loss per step: ${steps(sftAgain.updates)
      .map((metrics) => metrics.loss!.toFixed(3))
      .join(" → ")}`,
  );

  // RL: completions sampled from the latest checkpoint, rewarded by the share of vowel-initial tokens.
  const messages = [{ role: "user", content: "Say something." }];
  const prompt = promptIds(model, messages);
  const vowel = (id: number) => /^\s?[aeiou]/i.test(model.tokenizer.decode([id]));
  let from: AdapterFiles | null = null;
  for (let job = 0; job < RL_JOBS; job++) {
    const adapter = from ? loadLoraAdapter(from, model) : null;
    const groups = Array.from({ length: 8 }, (_, group) => ({
      trajectories: Array.from({ length: 8 }, (_, i) => {
        const completion = sampleCompletion(model, prompt, { seed: 100 * group + i, maxTokens: 24, adapter });
        return { reward: completion.tokens.filter(vowel).length / completion.tokens.length, messages_and_choices: [...messages, artChoice(model, completion)] };
      }),
    }));
    const rewards = groups.flatMap((group) => group.trajectories.map((trajectory) => trajectory.reward));
    const result = await run({
      jobId: `bench-rl-${job}`,
      from,
      newAdapter: { seed: 1, baseModelNameOrPath: "bench" },
      work: { kind: "rl", groups, config: resolveRlConfig({ learning_rate: 2e-3, packed_sequence_length: 256, logprob_calculation_chunk_size: 256 }), rewardStdDevHistory: [] },
    });
    const trained = steps(result.updates);
    const tokens = trained.reduce((sum, metrics) => sum + metrics.num_trainable_tokens!, 0);
    console.log(
      `RL job ${job}: mean reward of its samples ${(rewards.reduce((a, b) => a + b, 0) / rewards.length).toFixed(3)}, ${trained.length} steps, ${tokens} trained tokens, ${result.seconds.toFixed(2)} s (${(tokens / result.seconds).toFixed(0)} tokens/s)`,
    );
    from = save(result.updates, `rl-${job}`);
  }
} finally {
  await threads.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
