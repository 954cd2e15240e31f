import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExperimentalConfigReq, resolveRlConfig, rlLossOptions } from "../../engine/train/config.js";
import { saveLoraAdapter } from "../../engine/lora/files.js";
import { createLoraAdapter } from "../../engine/lora/init.js";
import { jobRandom, planRlJob, planSftJob } from "../../engine/train/job/plan.js";
import { LoraTrainer } from "../../engine/train/lora-trainer.js";
import { resolveSftConfig } from "../../engine/train/sft-config.js";
import { sftLossInputs } from "../../engine/train/sft.js";
import type { TrajectoryGroupJson } from "../../engine/train/trajectory.js";
import { plainSequence } from "../../engine/train/transformer/sequence.js";
import { loadTinyModel, tinyModel } from "../../testing/models.js";
import { testPython } from "../../testing/python-env.js";
import { makeTempDir } from "../../testing/stores.js";
import { sampledChoice, trajectory } from "../../testing/training.js";
import { planRow, sftRow } from "./job-plan.js";

/**
 * The PyTorch trainer (python/flywheel_trainer, transformers + PEFT) against the built-in trainer
 * on the same rows, as the worker protocol's plan hands them over: the loss and every LoRA
 * gradient (before clipping and AdamW) agree within 1e-4, for SFT and for RL under each objective,
 * importance-sampling level and loss option of `experimental_config`.
 */
const TOLERANCE = 1e-4;
const pythonRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "python");
const model = loadTinyModel("qwen2");
const root = makeTempDir("flywheel-pytorch-parity-");
const adapterDir = path.join(root, "adapter");
let python: string;

/** A seeded adapter with B nonzero, so both factors get gradients. */
function startingAdapter() {
  const adapter = createLoraAdapter(model.config, { seed: 11 });
  let state = 12345;
  for (const module of adapter.modules()) {
    for (let i = 0; i < module.b.length; i++) {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      module.b[i] = (state / 2 ** 31 - 0.5) * 0.1;
    }
  }
  return adapter;
}

const rlRow = (experimental: ExperimentalConfigReq) => {
  const config = resolveRlConfig(experimental);
  const plan = planRlJob(model, { kind: "rl", groups: groups(), config, rewardStdDevHistory: [] }, jobRandom("parity"));
  return { config, row: plan.rows[0]! };
};
const SFT_LINES = [
  {
    messages: [
      { role: "user", content: "Name a color." },
      { role: "assistant", content: "blue, like the sky" },
    ],
  },
  {
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Count." },
      { role: "assistant", content: "one two three" },
      { role: "user", content: "More." },
      { role: "assistant", content: "four" },
    ],
  },
];
const sftBatch = () => planSftJob(model, { kind: "sft", rows: SFT_LINES, fileName: "train.jsonl", config: resolveSftConfig({ batch_size: 2 }, SFT_LINES.length) })[0]!;
let results: PythonResult[];

beforeAll(async () => {
  python = testPython();
  saveLoraAdapter(adapterDir, startingAdapter());
  const cases = CONFIGS.map(([, experimental]) => {
    const { config, row } = rlRow(experimental);
    return { kind: "rl", row: planRow(row), loss: rlLossOptions(config) };
  });
  cases.push({ kind: "rl", row: planRow(rlRow({}).row), loss: rlLossOptions(resolveRlConfig({ loss_fn: "ppo" })) });
  results = await pytorchGradients([...cases, { kind: "sft", rows: sftBatch().rows.map(sftRow) }]);
}, 900_000);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

interface PythonResult {
  loss: number;
  metrics: Record<string, number | null>;
  modules: { layer: number; name: string; gradA: string; gradB: string }[];
}

/** Runs every case in one Python process (loading torch is the slow part), without blocking the test worker. */
function pytorchGradients(cases: Record<string, unknown>[]): Promise<PythonResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ["-m", "flywheel_trainer.gradients"], { cwd: pythonRoot, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (status) => (status === 0 ? resolve(JSON.parse(stdout) as PythonResult[]) : reject(new Error(`flywheel_trainer.gradients failed (${status}): ${stderr.slice(-4000)}`))));
    child.stdin.end(JSON.stringify({ base_dir: tinyModel("qwen2").dir, adapter_dir: adapterDir, cases }));
  });
}

function floats(base64: string): Float32Array {
  const bytes = Buffer.from(base64, "base64");
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** Worst |TS − PyTorch| relative to the tensor's largest TS magnitude, over every factor. */
function worstGradientDifference(trainer: LoraTrainer, result: PythonResult): number {
  const modules = trainer.adapter.modules();
  expect(result.modules.map((m) => `${m.layer}.${m.name}`)).toEqual(modules.map((m) => `${m.layer}.${m.name}`));
  let worst = 0;
  result.modules.forEach((entry, i) => {
    for (const [actual, encoded] of [
      [trainer.gradientTensors[2 * i]!, entry.gradA],
      [trainer.gradientTensors[2 * i + 1]!, entry.gradB],
    ] as const) {
      const theirs = floats(encoded);
      expect(theirs.length).toBe(actual.length);
      let scale = 0;
      let difference = 0;
      for (let j = 0; j < actual.length; j++) {
        scale = Math.max(scale, Math.abs(actual[j]!));
        difference = Math.max(difference, Math.abs(actual[j]! - theirs[j]!));
      }
      if (scale > 0) worst = Math.max(worst, difference / scale);
    }
  });
  return worst;
}

function groups(): TrajectoryGroupJson[] {
  const answer = (content: string, ids: number[], reward: number) => trajectory(reward, { messages_and_choices: [{ role: "user", content: "Name a color." }, sampledChoice(content, ids)] });
  return [
    { trajectories: [answer("red", [101, 102, 103], 1), answer("blue", [104, 105], 0), answer("green", [106, 107, 108, 109], 0.5)], exceptions: [] },
    { trajectories: [answer("one", [201, 202], 0), answer("two", [203, 204, 205], 1)], exceptions: [] },
  ] as unknown as TrajectoryGroupJson[];
}

const CONFIGS: [string, ExperimentalConfigReq][] = [
  ["CISPO (the default)", {}],
  ["PPO, token level", { loss_fn: "ppo" }],
  ["PPO, sequence level, capped ratio, masked ratio", { loss_fn: "ppo", importance_sampling_level: "sequence", max_negative_advantage_importance_sampling_weight: 1.5, mask_prob_ratio: true, epsilon: 0.9, epsilon_high: 3 }],
  ["PPO, geometric average, kimi-k2 tau, truncated importance sampling", { loss_fn: "ppo", importance_sampling_level: "geometric_average", kimi_k2_tau: 0.3, truncated_importance_sampling: 2 }],
  ["CISPO, average level, KL penalty against the base model", { importance_sampling_level: "average", kl_penalty_coef: 0.2 }],
  ["PPO, KL penalty from the sampler's logprobs, advantage balance", { loss_fn: "ppo", kl_penalty_coef: 0.1, kl_penalty_source: "sample", advantage_balance: 0.5, scale_rewards: false }],
];

describe("the PyTorch trainer against the built-in trainer on the same rows", () => {
  CONFIGS.forEach(([label, experimental], index) => {
    it(`RL, ${label}: loss and LoRA gradients within ${TOLERANCE}`, () => {
      const { config, row } = rlRow(experimental);
      const options = rlLossOptions(config);
      const trainer = new LoraTrainer(model.transformer, startingAdapter());
      const refLogprobs = config.kl_penalty_coef > 0 ? trainer.logprobs(row, { adapter: null }) : undefined;
      const { result } = trainer.computeRlGradients(row, { options, ...(refLogprobs ? { refLogprobs } : {}) });
      expect(result.numTrainableTokens).toBeGreaterThan(3);
      const theirs = results[index]!;
      expect(Math.abs(theirs.loss - result.loss)).toBeLessThan(TOLERANCE * Math.max(1, Math.abs(result.loss)));
      expect(theirs.metrics.num_trainable_tokens).toBe(result.numTrainableTokens);
      if (result.entropy !== null) expect(theirs.metrics.entropy).toBeCloseTo(result.entropy, 4);
      if (result.klPolicyRef !== null) expect(theirs.metrics.kl_policy_ref).toBeCloseTo(result.klPolicyRef, 4);
      expect(theirs.metrics.probs_corr).toBeCloseTo(result.probsCorr, 4);
      expect(worstGradientDifference(trainer, theirs)).toBeLessThan(TOLERANCE);
    });
  });

  it(`SFT: the batch loss and LoRA gradients within ${TOLERANCE}`, () => {
    const batch = sftBatch();
    const trainer = new LoraTrainer(model.transformer, startingAdapter());
    const sequences = batch.rows.map((row) => ({ sequence: plainSequence(row.tokens), ...sftLossInputs(row) }));
    const loss = trainer.computeSftGradients(sequences, batch.numTrainableTokens);
    const theirs = results.at(-1)!;
    expect(Math.abs(theirs.loss - loss) / loss).toBeLessThan(TOLERANCE);
    expect(worstGradientDifference(trainer, theirs)).toBeLessThan(TOLERANCE);
  });

  it("notices a different loss: PPO's gradients are not CISPO's", () => {
    const { config, row } = rlRow({});
    const trainer = new LoraTrainer(model.transformer, startingAdapter());
    trainer.computeRlGradients(row, { options: rlLossOptions(config) });
    expect(worstGradientDifference(trainer, results[CONFIGS.length]!)).toBeGreaterThan(100 * TOLERANCE);
  });
});
