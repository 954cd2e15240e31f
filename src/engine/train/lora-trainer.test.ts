import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTinyModel } from "../../testing/models.js";
import { artChoice, sampleCompletion } from "../../testing/sampled-choices.js";
import { loadLoraAdapter } from "../lora/files.js";
import { createLoraAdapter } from "../lora/init.js";
import {
  buildSftBatches,
  LoraTrainer,
  packTokenizedResults,
  resolveRlConfig,
  resolveSftConfig,
  sftBatchPlan,
  rlLossInputs,
  rlLossOptions,
  rowLearningRate,
  sftExampleFromJson,
  tokenizeSftExample,
  tokenizeTrajectoryGroups,
  type TrajectoryGroupJson,
} from "./index.js";
import { modelTemplateDeps } from "./job/template-deps.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-trainer-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function sum(values: ArrayLike<number>, from = 0): number {
  let total = 0;
  for (let i = from; i < values.length; i++) if (!Number.isNaN(values[i])) total += values[i]!;
  return total;
}

describe("LoraTrainer", () => {
  const model = loadTinyModel("qwen2");
  const deps = modelTemplateDeps(model);
  const messages = [{ role: "user", content: "Name a color." }];
  const prompt = model.tokenizer.encode(deps.render(messages, undefined, { addGenerationPrompt: true, continueFinalMessage: false, templateKwargs: {} }), { addSpecialTokens: false });

  /** Σ ℓ of a completion after the prompt under the trainer's current adapter. */
  const completionLogprob = (trainer: LoraTrainer, tokens: number[]) => sum(trainer.sequenceLogprobs([...prompt, ...tokens]).logprobs, prompt.length - 1);

  it("recomputes the sampler's logprobs of completions sampled at temperature 1 within 1e-5", () => {
    const trainer = new LoraTrainer(model.transformer, createLoraAdapter(model.config, { seed: 1 }));
    // A trained adapter too: parity must hold for every adapter, not just the identity.
    for (const module of trainer.adapter.modules()) module.b.fill(0.01);
    let worst = 0;
    for (let seed = 0; seed < 4; seed++) {
      const completion = sampleCompletion(model, prompt, { adapter: trainer.adapter, seed, maxTokens: 12 });
      const scored = trainer.sequenceLogprobs([...prompt, ...completion.tokens]).logprobs;
      completion.logprobs.forEach((logprob, i) => (worst = Math.max(worst, Math.abs(scored[prompt.length - 1 + i]! - logprob))));
    }
    expect(worst).toBeLessThan(1e-5);
  });

  it("raises the logprob of rewarded completions with RL steps on tokenized, packed trajectory groups", () => {
    const trainer = new LoraTrainer(model.transformer, createLoraAdapter(model.config, { seed: 2 }));
    const completions = [0, 1, 2, 3].map((seed) => sampleCompletion(model, prompt, { adapter: trainer.adapter, seed: seed + 10, maxTokens: 10 }));
    const rewards = [1, 0, 1, 0];
    const group: TrajectoryGroupJson = {
      trajectories: completions.map((completion, i) => ({ reward: rewards[i]!, messages_and_choices: [...messages, artChoice(model, completion)] })),
    };
    const config = resolveRlConfig({ learning_rate: 5e-3 });
    const { results } = tokenizeTrajectoryGroups([group], deps, { scaleRewards: config.scale_rewards, allowTrainingWithoutLogprobs: false, random: () => 0.5 });
    const batch = packTokenizedResults(results, 128, { padTokenId: model.tokenizer.eosTokenId!, advantageBalance: config.advantage_balance, random: () => 0.5 });
    expect(batch.rows).toHaveLength(1);
    const row = batch.rows[0]!;

    const score = () => completions.map((completion) => completionLogprob(trainer, completion.tokens));
    const before = score();
    const numTrained = completions.reduce((total, completion) => total + completion.tokens.length, 0);
    for (let step = 0; step < 4; step++) {
      const metrics = trainer.rlStep(row, { options: rlLossOptions(config) }, rowLearningRate(config.learning_rate, row, config.num_trajectories_learning_rate_multiplier_power));
      expect(metrics.numTrainableTokens).toBe(numTrained);
      expect(metrics.gradNorm).toBeGreaterThan(0);
      expect(Number.isFinite(metrics.loss) && metrics.entropy! > 0).toBe(true);
      // Step 0 runs on the sampling policy: the sampler's and the trainer's logprobs coincide.
      if (step === 0) expect(metrics.probsCorr).toBeCloseTo(1, 9);
    }
    const after = score();
    for (const i of [0, 2]) expect(after[i]).toBeGreaterThan(before[i]! + 0.5);
    for (const i of [1, 3]) expect(after[i]).toBeLessThan(before[i]! - 0.5);
  });

  it("scores rows with another adapter or the base model for precalculated and KL reference logprobs", () => {
    const trainer = new LoraTrainer(model.transformer, createLoraAdapter(model.config, { seed: 3 }));
    const completion = sampleCompletion(model, prompt, { adapter: trainer.adapter, seed: 5, maxTokens: 8 });
    const group: TrajectoryGroupJson = {
      trajectories: [1, 0].map((reward, i) => ({ reward, messages_and_choices: [...messages, artChoice(model, i === 0 ? completion : sampleCompletion(model, prompt, { adapter: trainer.adapter, seed: 6, maxTokens: 8 }))] })),
    };
    const config = resolveRlConfig({ learning_rate: 5e-3, precalculate_logprobs: true, kl_penalty_coef: 0.1 });
    const { results } = tokenizeTrajectoryGroups([group], deps, { scaleRewards: true, allowTrainingWithoutLogprobs: false, random: () => 0.5 });
    const row = packTokenizedResults(results, 96, { padTokenId: 0, random: () => 0.5 }).rows[0]!;
    const precalculated = trainer.logprobs(row);
    const mask = rlLossInputs(row).mask;
    // A fresh adapter is the identity: its logprobs are the base model's.
    expect(trainer.logprobs(row, { adapter: null })).toEqual(precalculated);
    expect(precalculated.every((value, p) => (mask[p] ? Number.isFinite(value) : Number.isNaN(value)))).toBe(true);
    const reference = trainer.logprobs(row, { adapter: null });
    for (let step = 0; step < 3; step++) {
      const current = trainer.logprobs(row);
      const metrics = trainer.rlStep(row, { options: rlLossOptions(config), precalculatedLogprobs: precalculated, refLogprobs: reference }, config.learning_rate);
      let expectedKl = 0;
      let count = 0;
      mask.forEach((bit, p) => {
        if (!bit) return;
        expectedKl += current[p]! - reference[p]!;
        count++;
      });
      expect(metrics.klPolicyRef).toBeCloseTo(expectedKl / count, 9);
    }
    expect(trainer.logprobs(row, { adapter: null })).toEqual(reference);
    expect(trainer.logprobs(row)).not.toEqual(reference);
  });

  it("lowers the SFT loss over a few steps and reports the batch's token-mean cross-entropy", () => {
    const trainer = new LoraTrainer(model.transformer, createLoraAdapter(model.config, { seed: 4 }));
    const lines = [
      {
        messages: [
          { role: "user", content: "ping" },
          { role: "assistant", content: "pong" },
        ],
      },
      {
        messages: [
          { role: "user", content: "hello" },
          { role: "assistant", content: "hello world" },
        ],
      },
      {
        messages: [
          { role: "user", content: "red?" },
          { role: "assistant", content: "blue" },
        ],
      },
    ];
    const config = resolveSftConfig({ learning_rate: 1e-2 }, lines.length);
    const rows = lines.map((line, i) => tokenizeSftExample(sftExampleFromJson(line, ["train.jsonl", i]), deps, config.assistant_turns));
    const { batches } = buildSftBatches(rows, sftBatchPlan(config), model.config.maxPositionEmbeddings);
    // The loss a step reports is the batch's token-mean cross-entropy before its update.
    const crossEntropy = (batch: (typeof batches)[number]) => {
      let total = 0;
      for (const row of batch.rows) {
        const logprobs = trainer.sequenceLogprobs(row.tokens).logprobs;
        for (let p = 0; p + 1 < row.tokens.length; p++) if (row.labels[p + 1] !== -100) total -= logprobs[p]!;
      }
      return total / batch.numTrainableTokens;
    };
    const epochLosses: number[] = [];
    for (let epoch = 0; epoch < 4; epoch++) {
      let epochLoss = 0;
      for (const batch of batches) {
        const expected = crossEntropy(batch);
        const metrics = trainer.sftStep(batch);
        expect(metrics.loss).toBeCloseTo(expected, 9);
        expect(metrics).toMatchObject({ learningRate: 1e-2, numTrajectories: batch.rows.length, numTokens: batch.numTokens, numTrainableTokens: batch.numTrainableTokens });
        epochLoss += metrics.loss;
      }
      epochLosses.push(epochLoss);
    }
    for (let i = 1; i < epochLosses.length; i++) expect(epochLosses[i]).toBeLessThan(epochLosses[i - 1]!);
    expect(epochLosses[3]).toBeLessThan(0.7 * epochLosses[0]!);
  });

  it("saves a PEFT adapter that loads back into inference with the trained logprobs", () => {
    const trainer = new LoraTrainer(model.transformer, createLoraAdapter(model.config, { seed: 5, baseModelNameOrPath: "tiny-qwen2" }));
    const rows = [
      tokenizeSftExample(
        sftExampleFromJson(
          {
            messages: [
              { role: "user", content: "a" },
              { role: "assistant", content: "b c" },
            ],
          },
          [],
        ),
        deps,
        "all",
      ),
    ];
    for (let step = 0; step < 3; step++) trainer.sftStep({ rows, learningRate: 1e-2 });
    const dir = path.join(root, "checkpoint");
    trainer.saveAdapter(dir);
    const loaded = loadLoraAdapter(dir, model);
    expect(loaded.parameters()).toEqual(trainer.adapter.parameters());
    expect(Object.keys(trainer.adapterFiles()).sort()).toEqual(fs.readdirSync(dir).sort());
    const tokens = [...prompt, 400, 401, 402];
    const served = sampleCompletion(model, prompt, { adapter: loaded, seed: 3, maxTokens: 6 });
    const trained = trainer.sequenceLogprobs([...prompt, ...served.tokens]).logprobs;
    served.logprobs.forEach((logprob, i) => expect(Math.abs(trained[prompt.length - 1 + i]! - logprob)).toBeLessThan(1e-5));
    expect(trainer.sequenceLogprobs(tokens, { adapter: loaded }).logprobs).toEqual(trainer.sequenceLogprobs(tokens).logprobs);
  });

  it("continues from exported optimizer state exactly", () => {
    const rows = [
      tokenizeSftExample(
        sftExampleFromJson(
          {
            messages: [
              { role: "user", content: "x" },
              { role: "assistant", content: "y z" },
            ],
          },
          [],
        ),
        deps,
        "all",
      ),
    ];
    const first = new LoraTrainer(model.transformer, createLoraAdapter(model.config, { seed: 6 }));
    first.sftStep({ rows, learningRate: 1e-2 });
    const resumedAdapter = createLoraAdapter(model.config, { seed: 6 });
    resumedAdapter.parameters().forEach((tensor, i) => tensor.set(first.adapter.parameters()[i]!));
    const resumed = new LoraTrainer(model.transformer, resumedAdapter, { optimizerState: first.exportOptimizerState() });
    first.sftStep({ rows, learningRate: 1e-2 });
    resumed.sftStep({ rows, learningRate: 1e-2 });
    expect(resumed.adapter.parameters()).toEqual(first.adapter.parameters());
  });

  it("steps on a row without trained tokens with a zero gradient", () => {
    const trainer = new LoraTrainer(model.transformer, createLoraAdapter(model.config, { seed: 7 }));
    const row = packTokenizedResults(
      [
        {
          tokenIds: [...prompt, 400],
          logprobs: [...prompt.map(() => NaN), -1],
          assistantMask: [...prompt.map(() => 0), 1],
          inputPos: [...prompt.keys(), prompt.length],
          advantage: 1,
          weight: 1,
          promptId: 1,
          promptLength: 0,
          groupIndex: 0,
          trajectoryIndex: 0,
        },
      ],
      64,
      { padTokenId: 0, random: () => 0.5 },
    ).rows[0]!;
    row.assistantMask.fill(0);
    const before = trainer.adapter.parameters().map((tensor) => tensor.slice());
    const metrics = trainer.rlStep(row, { options: rlLossOptions(resolveRlConfig({})) }, 1e-3);
    expect(metrics).toMatchObject({ loss: 0, gradNorm: 0, numTrainableTokens: 0 });
    // Only weight decay moves the weights (B stays 0).
    trainer.adapter.modules().forEach((module) => expect(module.b.every((value) => value === 0)).toBe(true));
    expect(trainer.adapter.parameters()[0]).not.toEqual(before[0]);
  });

  it("refuses an adapter made for another model", () => {
    const other = loadTinyModel("qwen2", { intermediateSize: 96 });
    expect(() => new LoraTrainer(model.transformer, createLoraAdapter(other.config))).toThrow(/intermediateSize 96, this one has 128/);
  });
});
