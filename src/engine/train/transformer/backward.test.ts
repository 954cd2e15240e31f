import { describe, expect, it } from "vitest";
import { randomizeAdapter } from "../../../testing/lora.js";
import { loadTinyModel } from "../../../testing/models.js";
import { packedTestRow } from "../../../testing/packed-rows.js";
import { createLoraAdapter } from "../../lora/init.js";
import { Rng } from "../../sampling/rng.js";
import { TsTrainingKernels } from "../kernels/ts/index.js";
import { rlLossInputs, type RlLossInputs } from "../loss-inputs.js";
import { rlRowLossAt, type RlLossOptions } from "../rl-loss.js";
import { sftBatchLoss } from "../sft.js";
import { LoraGradients } from "./lora-gradients.js";
import { plainSequence, type TrainingSequence } from "./sequence.js";
import { TrainingModel } from "./training-model.js";

const ARCHITECTURES = ["llama", "qwen2", "qwen3"] as const;

/**
 * PPO with the "average" ratio: the sequence mean couples every token of a completion; kimi-k2's
 * shift exercises the detached path. The clip range is wide so the finite-difference steps never
 * cross its kinks (the clipping itself is tested with the loss).
 */
const RL_OPTIONS: RlLossOptions = {
  objective: "ppo",
  epsilon: 0.9,
  epsilonHigh: 2,
  importanceSamplingLevel: "average",
  maxImportanceSamplingWeight: null,
  maskProbRatio: false,
  kimiK2Tau: 0.5,
  klPenaltyCoef: 0,
  klPenaltySource: "current_learner",
  truncatedImportanceSampling: null,
};

interface Problem {
  sequence: TrainingSequence;
  targets: Int32Array;
  mask: Uint8Array;
  /** The loss at ℓ, with stop-gradient values taken from ℓ₀ (the unperturbed forward), and dLoss/dℓ. */
  loss(logprobs: Float64Array, detached: Float64Array): { loss: number; gradient: Float64Array };
}

function sftProblem(tokens: number[]): Problem {
  const targets = new Int32Array(tokens.length);
  const mask = new Uint8Array(tokens.length);
  for (let p = 3; p + 1 < tokens.length; p++) [targets[p], mask[p]] = [tokens[p + 1]!, 1];
  return {
    sequence: plainSequence(tokens),
    targets,
    mask,
    loss: (logprobs) => {
      const result = sftBatchLoss([{ mask, logprobs }]);
      return { loss: result.loss, gradient: result.gradients[0]! };
    },
  };
}

function rlProblem(model: TrainingModel, adapter: ReturnType<typeof createLoraAdapter>): Problem {
  const prompt = [12, 300, 45, 99, 7];
  const completions = [[400, 401, 402, 403], [410, 411, 412], [420, 421, 422, 423, 424]];
  const row = packedTestRow(prompt, completions.map((tokens, i) => ({ tokens, advantage: [1, -0.5, 0.25][i]! })), 24);
  const base = rlLossInputs(row);
  // Old logprobs near the current ones, so every ratio sits inside the clip range.
  const current = model.forward(row, adapter, base).logprobs;
  const rng = Rng.fromSeed(9);
  const inputs: RlLossInputs = { ...base, oldLogprobs: base.oldLogprobs.map((_, t) => (base.mask[t] ? current[t]! + 0.05 * (2 * rng.nextFloat() - 1) : NaN)) };
  return {
    sequence: row,
    targets: inputs.targets,
    mask: inputs.mask,
    loss: (logprobs, detached) => {
      const result = rlRowLossAt(inputs, logprobs, detached, RL_OPTIONS);
      return { loss: result.loss, gradient: result.gradient };
    },
  };
}

function dot(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let sum = 0;
  a.forEach((tensor, i) => tensor.forEach((value, j) => (sum += value * b[i]![j]!)));
  return sum;
}

describe.each(ARCHITECTURES)("LoRA gradients on %s", (architecture) => {
  const loaded = loadTinyModel(architecture);
  const model = new TrainingModel(loaded.transformer, new TsTrainingKernels());
  const adapter = randomizeAdapter(createLoraAdapter(loaded.config, { seed: 11 }), 12);
  const parameters = adapter.parameters();

  function lossAt(problem: Problem, detached: Float64Array): number {
    const logprobs = model.forward(problem.sequence, adapter, problem).logprobs;
    return problem.loss(logprobs, detached).loss;
  }

  /** Central difference of the loss along `direction` (one array per parameter tensor). */
  function directional(problem: Problem, detached: Float64Array, direction: Float32Array[], step: number): number {
    const saved = parameters.map((tensor) => tensor.slice());
    const shift = (sign: number) => parameters.forEach((tensor, i) => tensor.forEach((_, j) => (tensor[j] = saved[i]![j]! + sign * step * direction[i]![j]!)));
    shift(1);
    const plus = lossAt(problem, detached);
    shift(-1);
    const minus = lossAt(problem, detached);
    parameters.forEach((tensor, i) => tensor.set(saved[i]!));
    return (plus - minus) / (2 * step);
  }

  function analytic(problem: Problem): { gradients: LoraGradients; detached: Float64Array } {
    const scores = model.forward(problem.sequence, adapter, problem, true);
    const { gradient } = problem.loss(scores.logprobs, scores.logprobs);
    const gradients = new LoraGradients(adapter);
    model.backward(gradient, gradients);
    return { gradients, detached: scores.logprobs };
  }

  function checkAgainstFiniteDifferences(problem: Problem): void {
    const { gradients, detached } = analytic(problem);
    const rng = Rng.fromSeed(21);
    // Every factor of every module on its own, then all parameters at once.
    const directions: Float32Array[][] = parameters.map((_, index) => parameters.map((tensor, i) => (i === index ? tensor.map(() => 2 * rng.nextFloat() - 1) : new Float32Array(tensor.length))));
    directions.push(parameters.map((tensor) => tensor.map(() => 2 * rng.nextFloat() - 1)));
    let worst = 0;
    for (const direction of directions) {
      const expected = dot(gradients.tensors, direction);
      // Richardson extrapolation of two central differences cancels their O(h²) error.
      const numeric = (4 * directional(problem, detached, direction, 2.5e-3) - directional(problem, detached, direction, 5e-3)) / 3;
      const error = Math.abs(numeric - expected) / Math.max(Math.abs(expected), 0.1);
      worst = Math.max(worst, error);
    }
    expect(worst).toBeLessThan(1e-3);
    // Not vacuous: every module's factors receive a gradient.
    for (const tensor of gradients.tensors) expect(tensor.some((value) => Math.abs(value) > 1e-6)).toBe(true);
  }

  it("match central differences for the SFT loss", () => {
    checkAgainstFiniteDifferences(sftProblem([12, 300, 45, 99, 7, 560, 201, 18, 64, 500, 3, 250]));
  });

  it("match central differences for the RL loss on a packed row", () => {
    checkAgainstFiniteDifferences(rlProblem(model, adapter));
  });

  it("are the same when activations are recomputed instead of kept", () => {
    const problem = rlProblem(model, adapter);
    const kept = analytic(problem).gradients;
    const recomputing = new TrainingModel(loaded.transformer, new TsTrainingKernels(), { activationBudgetBytes: 0, logitsChunkRows: 3 });
    const scores = recomputing.forward(problem.sequence, adapter, problem, true);
    const gradients = new LoraGradients(adapter);
    recomputing.backward(problem.loss(scores.logprobs, scores.logprobs).gradient, gradients);
    gradients.tensors.forEach((tensor, i) => expect(tensor).toEqual(kept.tensors[i]));
  });
});
