import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bf16TestKernelBackends } from "../../../testing/kernel-backends.js";
import { loadTinyModel } from "../../../testing/models.js";
import { artChoice, type Completion, promptIds, sampleCompletion } from "../../../testing/sampled-choices.js";
import type { LoraAdapter } from "../../lora/adapter.js";
import { loadLoraAdapter, saveLoraAdapter } from "../../lora/files.js";
import { createLoraAdapter } from "../../lora/init.js";
import { resolveRlConfig, type ExperimentalConfigReq } from "../config.js";
import { NonFiniteTrainingError, TrainingInputError } from "../errors.js";
import { LoraTrainer } from "../lora-trainer.js";
import { OPTIMIZER_STATE_FILE, readOptimizerState } from "../optimizer-file.js";
import { resolveSftConfig } from "../sft-config.js";
import type { TrajectoryGroupJson } from "../trajectory.js";
import { runTrainingJob } from "./run-training-job.js";
import type { AdapterFiles, TrainerUpdate, TrainingJobSpec } from "./types.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-training-job-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const model = loadTinyModel("qwen2");
const messages = [{ role: "user", content: "Name a color." }];
const prompt = promptIds(model, messages);

function rlSpec(jobId: string, groups: TrajectoryGroupJson[], config: ExperimentalConfigReq, from: AdapterFiles | null = null, extra: Partial<TrainingJobSpec> = {}): TrainingJobSpec {
  return { jobId, from, newAdapter: { seed: 7, baseModelNameOrPath: "tiny-qwen2" }, work: { kind: "rl", groups, config: resolveRlConfig(config), rewardStdDevHistory: [] }, ...extra };
}

function run(spec: TrainingJobSpec): TrainerUpdate[] {
  return [...runTrainingJob(model, spec)];
}

/** Writes a finished job's files like a checkpoint directory and returns their paths. */
function saveCheckpoint(updates: TrainerUpdate[], name: string): AdapterFiles {
  const finished = updates.at(-1)!;
  if (finished.type !== "finished" || !finished.adapter) throw new Error("the job trained nothing");
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  for (const [file, bytes] of Object.entries(finished.adapter)) fs.writeFileSync(path.join(dir, file), bytes);
  return { configFile: path.join(dir, "adapter_config.json"), weightsFile: path.join(dir, "adapter_model.safetensors"), optimizerFile: path.join(dir, OPTIMIZER_STATE_FILE) };
}

const scorer = new LoraTrainer(model.transformer, createLoraAdapter(model.config));

/** Σ ℓ of a completion after the prompt, under an adapter (null: the base model). */
function completionLogprob(adapter: LoraAdapter | null, completion: Completion): number {
  const logprobs = scorer.sequenceLogprobs([...prompt, ...completion.tokens], { adapter }).logprobs;
  let total = 0;
  for (let p = prompt.length - 1; p < logprobs.length - 1; p++) total += logprobs[p]!;
  return total;
}

describe("runTrainingJob (RL)", () => {
  const completions = [0, 1, 2, 3].map((seed) => sampleCompletion(model, prompt, { seed: seed + 20, maxTokens: 10 }));
  const rewards = [1, 0, 1, 0];
  const groups: TrajectoryGroupJson[] = [{ trajectories: completions.map((completion, i) => ({ reward: rewards[i]!, messages_and_choices: [...messages, artChoice(model, completion)] })) }];

  it("announces its steps, reports each one, and continues job after job from the last checkpoint", () => {
    let from: AdapterFiles | null = null;
    for (let job = 0; job < 3; job++) {
      const updates = run(rlSpec(`rl-${job}`, groups, { learning_rate: 5e-3 }, from));
      const [started, ...rest] = updates;
      expect(started).toEqual({ type: "started", numSequences: 1 });
      const steps = rest.filter((update) => update.type === "gradient_step");
      expect(steps).toHaveLength(1);
      expect(rest.at(-1)?.type).toBe("finished");
      const metrics = steps[0]!.type === "gradient_step" ? steps[0]!.metrics : {};
      expect(Object.keys(metrics).sort()).toEqual(
        ["entropy", "grad_norm", "learning_rate", "loss", "num_groups_submitted", "num_groups_trainable", "num_trainable_tokens", "num_trajectories", "probs_corr", "sampler_logprob_max_diff", "tokens_per_second"].sort(),
      );
      expect(metrics).toMatchObject({ learning_rate: 5e-3, num_groups_submitted: 1, num_groups_trainable: 1, num_trajectories: 4 });
      expect(metrics.num_trainable_tokens).toBe(completions.reduce((sum, completion) => sum + completion.tokens.length, 0));
      // The sampled logprobs are the first job's policy, so the trainer's agree with them exactly there.
      if (job === 0) expect(metrics.probs_corr).toBeCloseTo(1, 9);
      // ...bit for bit: the trainer's forward is the sampler's.
      if (job === 0) expect(metrics.sampler_logprob_max_diff).toBe(0);
      from = saveCheckpoint(updates, `rl-${job}`);
      // The optimizer moments travel with the checkpoint: one more step each job.
      expect(readOptimizerState(from.optimizerFile!)).toMatchObject({ step: job + 1, mode: "rl" });
    }
    const trained = loadLoraAdapter(from!, model);
    for (const [i, completion] of completions.entries()) {
      const before = completionLogprob(null, completion);
      const after = completionLogprob(trained, completion);
      if (rewards[i]) expect(after, `completion ${i}`).toBeGreaterThan(before + 0.3);
      else expect(after, `completion ${i}`).toBeLessThan(before - 0.3);
    }
  });

  it("trains an empty reply (a completion of only the end-of-turn token) like any other", () => {
    const eos = model.tokenizer.eosTokenId!;
    const empty: Completion = { tokens: [eos], logprobs: [-6.5] };
    const group = { trajectories: [empty, completions[0]!].map((completion, i) => ({ reward: i, messages_and_choices: [...messages, artChoice(model, completion)] })) };
    const updates = run(rlSpec("empty", [group], { learning_rate: 1e-3 }));
    const step = updates.find((update) => update.type === "gradient_step");
    expect(step?.type === "gradient_step" && step.metrics.num_trainable_tokens).toBe(1 + completions[0]!.tokens.length);
  });

  it("trains nothing and announces 0 steps when no group's rewards vary", () => {
    const flat = [{ trajectories: groups[0]!.trajectories.map((trajectory) => ({ ...trajectory, reward: 0.5 })) }];
    expect(run(rlSpec("flat", flat, {}))).toEqual([
      { type: "started", numSequences: 0 },
      { type: "finished", adapter: null },
    ]);
  });

  it("scales the rate by the reward-std-dev trend and reports the KL against the reference", () => {
    // History (1, 1.0), (2, 0.5): slope −0.5, intercept 1.5 → multiplier (−0.5·2 + 1.5) / 1.5 = 1/3.
    const spec = rlSpec("scaled", groups, { learning_rate: 6e-3, scale_learning_rate_by_reward_std_dev: true, kl_penalty_coef: 0.1, precalculate_logprobs: true }, null, {
      klReference: { files: null },
    });
    if (spec.work.kind === "rl")
      spec.work.rewardStdDevHistory = [
        { step: 1, value: 1 },
        { step: 2, value: 0.5 },
      ];
    const step = run(spec).find((update) => update.type === "gradient_step");
    expect(step?.type === "gradient_step" && step.metrics.learning_rate).toBeCloseTo(2e-3, 12);
    // A fresh adapter is the base model: the policy equals the reference, so the KL term is 0.
    expect(step?.type === "gradient_step" && step.metrics.kl_policy_ref).toBeCloseTo(0, 9);
  });

  it("refuses sampled token ids the model does not have, naming the trajectory", () => {
    const foreign = structuredClone(groups);
    const choice = foreign[0]!.trajectories[1]!.messages_and_choices[1] as { logprobs: { content: { token: string }[] } };
    choice.logprobs.content[0]!.token = `token_id:${model.config.vocabSize + 5}`;
    const error = (() => {
      try {
        run(rlSpec("foreign", foreign, {}));
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(TrainingInputError);
    expect((error as Error).message).toMatch(/^trajectory_groups\.0\.trajectories\.1: token id \d+ is outside the model's vocabulary/);
  });
});

describe.each(bf16TestKernelBackends())("runTrainingJob (RL) on %s kernels", (backend) => {
  it("recomputes every sampled logprob bit for bit under bf16 products: sampler_logprob_max_diff is 0", () => {
    const bf16Model = loadTinyModel("qwen2", {}, backend);
    const bf16Prompt = promptIds(bf16Model, messages);
    const sampled = [0, 1, 2].map((seed) => sampleCompletion(bf16Model, bf16Prompt, { seed: seed + 40, maxTokens: 10 }));
    const trajectories = sampled.map((completion, i) => ({ reward: i, messages_and_choices: [...messages, artChoice(bf16Model, completion)] }));
    const step = [...runTrainingJob(bf16Model, rlSpec("rl-bf16", [{ trajectories }], { learning_rate: 5e-3 }))].find((update) => update.type === "gradient_step");
    expect(step?.type === "gradient_step" && step.metrics.sampler_logprob_max_diff).toBe(0);
  });
});

describe("runTrainingJob (SFT)", () => {
  const conversations = [
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

  it("lowers the loss batch after batch at each batch's own rate and writes a PEFT adapter", () => {
    const rows = [...conversations, ...conversations, ...conversations, ...conversations];
    const rates = [1e-2, 1e-2, 8e-3, 6e-3];
    const updates = run({
      jobId: "sft",
      from: null,
      newAdapter: { seed: 3, baseModelNameOrPath: "tiny-qwen2" },
      work: { kind: "sft", rows, fileName: "train.jsonl", config: resolveSftConfig({ learning_rate: rates }, rows.length) },
    });
    expect(updates[0]).toEqual({ type: "started", numSequences: 4 });
    const steps = updates.flatMap((update) => (update.type === "gradient_step" ? [update.metrics] : []));
    expect(steps.map((metrics) => metrics.learning_rate)).toEqual(rates);
    expect(steps.map((metrics) => metrics.num_trajectories)).toEqual([2, 2, 2, 2]);
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.loss).toBeLessThan(steps[i - 1]!.loss!);
    expect(Object.keys(steps[0]!).sort()).toEqual(["grad_norm", "learning_rate", "loss", "num_tokens", "num_trainable_tokens", "num_trajectories", "tokens_per_second"]);
    const files = saveCheckpoint(updates, "sft");
    expect(loadLoraAdapter(files, model).config).toMatchObject({ rank: 8, alpha: 16 });
    expect(readOptimizerState(files.optimizerFile!)).toMatchObject({ step: 4, mode: "sft" });
  });

  it("names the row of bad data", () => {
    const rows = [conversations[0], { messages: [{ role: "user", content: "no answer" }] }];
    const spec: TrainingJobSpec = {
      jobId: "bad",
      from: null,
      newAdapter: { seed: 3, baseModelNameOrPath: "tiny-qwen2" },
      work: { kind: "sft", rows, fileName: "train.jsonl", config: resolveSftConfig({}, 2) },
    };
    expect(() => run(spec)).toThrow(/^train\.jsonl row 2\.messages: the last message must be an assistant message/);
  });
});

describe("runTrainingJob (non-finite steps)", () => {
  const completions = [0, 1].map((seed) => sampleCompletion(model, prompt, { seed: seed + 40, maxTokens: 6 }));
  const groups: TrajectoryGroupJson[] = [{ trajectories: completions.map((completion, i) => ({ reward: i, messages_and_choices: [...messages, artChoice(model, completion)] })) }];
  const sftRows = [
    {
      messages: [
        { role: "user", content: "ping" },
        { role: "assistant", content: "pong" },
      ],
    },
  ];
  const sftSpec = (learningRate: number, from: AdapterFiles | null = null): TrainingJobSpec => ({
    jobId: "sft-non-finite",
    from,
    newAdapter: { seed: 3, baseModelNameOrPath: "tiny-qwen2" },
    work: { kind: "sft", rows: sftRows, fileName: "train.jsonl", config: resolveSftConfig({ learning_rate: learningRate }, 1) },
  });

  /** The updates a job yielded before it threw, and what it threw. */
  function runUntilError(spec: TrainingJobSpec): { updates: TrainerUpdate[]; error: unknown } {
    const updates: TrainerUpdate[] = [];
    try {
      for (const update of runTrainingJob(model, spec)) updates.push(update);
    } catch (error) {
      return { updates, error };
    }
    return { updates, error: undefined };
  }

  // The ranges the routes enforce stop these at the door; the trainer must still never commit them.
  it.each([
    ["an RL rate of 1e30", () => rlSpec("rl-huge-rate", groups, { learning_rate: 1e30 })],
    ["an RL rate multiplied past 1 (K^p)", () => rlSpec("rl-huge-power", groups, { learning_rate: 0.5, num_trajectories_learning_rate_multiplier_power: 2 })],
    ["an SFT rate of 1e308", () => sftSpec(1e308)],
  ])("fails the step, before its gradient_step and without finishing, for %s", (_name, spec) => {
    const { updates, error } = runUntilError(spec());
    expect(error).toBeInstanceOf(NonFiniteTrainingError);
    expect((error as Error).message).toMatch(/^gradient step 1: the (updated weights are not finite|step's learning rate .* is outside \(0, 1\]).*; no checkpoint was committed/);
    expect(updates.map((update) => update.type)).toEqual(["started"]);
  });

  it("fails on the loss when the checkpoint it continues from holds non-finite weights", () => {
    const poisoned = createLoraAdapter(model.config, { seed: 5 });
    for (const factors of poisoned.parameters()) factors.fill(Number.NaN, 0, 3);
    const dir = path.join(root, "poisoned");
    saveLoraAdapter(dir, poisoned);
    const from = { configFile: path.join(dir, "adapter_config.json"), weightsFile: path.join(dir, "adapter_model.safetensors") };
    for (const spec of [sftSpec(1e-3, from), rlSpec("rl-poisoned", groups, {}, from)]) {
      const { updates, error } = runUntilError(spec);
      expect(error).toBeInstanceOf(NonFiniteTrainingError);
      expect((error as Error).message).toMatch(/^gradient step 1: the loss is not finite \(NaN\)/);
      expect(updates.map((update) => update.type)).toEqual(["started"]);
    }
  });
});
