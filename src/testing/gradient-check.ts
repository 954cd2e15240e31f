import type { LoraAdapter } from "../engine/lora/adapter.js";
import { Rng } from "../engine/sampling/rng.js";
import { rlLossInputs, type RlLossInputs } from "../engine/train/loss-inputs.js";
import { rlRowLossAt, type RlLossOptions } from "../engine/train/rl-loss.js";
import { sftBatchLoss } from "../engine/train/sft.js";
import { plainSequence, type TrainingSequence } from "../engine/train/transformer/sequence.js";
import type { TrainingModel } from "../engine/train/transformer/training-model.js";
import { packedTestRow } from "./packed-rows.js";

/**
 * PPO with the "average" ratio: the sequence mean couples every token of a completion; kimi-k2's
 * shift exercises the detached path. The clip range is wide so the finite-difference steps never
 * cross its kinks (the clipping itself is tested with the loss).
 */
export const GRADIENT_CHECK_RL_OPTIONS: RlLossOptions = {
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

/** A loss over one training sequence, for gradient checks. */
export interface GradientProblem {
  sequence: TrainingSequence;
  targets: Int32Array;
  mask: Uint8Array;
  /** The loss at ℓ, with stop-gradient values taken from ℓ₀ (the unperturbed forward), and dLoss/dℓ. */
  loss(logprobs: Float64Array, detached: Float64Array): { loss: number; gradient: Float64Array };
}

/** The SFT loss of one plain sequence, trained from its fourth token on. */
export function sftProblem(tokens: number[]): GradientProblem {
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

/** The RL loss of a packed row (one prompt, three completions) with old logprobs near the current ones. */
export function rlProblem(model: TrainingModel, adapter: LoraAdapter | null): GradientProblem {
  const prompt = [12, 300, 45, 99, 7];
  const completions = [
    [400, 401, 402, 403],
    [410, 411, 412],
    [420, 421, 422, 423, 424],
  ];
  const row = packedTestRow(
    prompt,
    completions.map((tokens, i) => ({ tokens, advantage: [1, -0.5, 0.25][i]! })),
    24,
  );
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
      const result = rlRowLossAt(inputs, logprobs, detached, GRADIENT_CHECK_RL_OPTIONS);
      return { loss: result.loss, gradient: result.gradient };
    },
  };
}

export function dotProduct(a: readonly Float32Array[], b: readonly Float32Array[]): number {
  let sum = 0;
  a.forEach((tensor, i) => tensor.forEach((value, j) => (sum += value * b[i]![j]!)));
  return sum;
}

/**
 * The worst relative error between ⟨gradient, d⟩ and the loss's directional derivative along d, for
 * each direction: central differences at two step sizes, Richardson-extrapolated (which cancels
 * their O(h²) error). `lossAt` evaluates the loss with the parameters as they are.
 */
export function worstDirectionalError(parameters: Float32Array[], gradients: readonly Float32Array[], directions: Float32Array[][], lossAt: () => number, step = 2.5e-3): number {
  const saved = parameters.map((tensor) => tensor.slice());
  const directional = (direction: Float32Array[], h: number) => {
    const shift = (sign: number) => parameters.forEach((tensor, i) => tensor.forEach((_, j) => (tensor[j] = saved[i]![j]! + sign * h * direction[i]![j]!)));
    shift(1);
    const plus = lossAt();
    shift(-1);
    const minus = lossAt();
    parameters.forEach((tensor, i) => tensor.set(saved[i]!));
    return (plus - minus) / (2 * h);
  };
  let worst = 0;
  for (const direction of directions) {
    const expected = dotProduct(gradients, direction);
    const numeric = (4 * directional(direction, step) - directional(direction, 2 * step)) / 3;
    worst = Math.max(worst, Math.abs(numeric - expected) / Math.max(Math.abs(expected), 0.1));
  }
  return worst;
}

/** One random direction per tensor (zero elsewhere), then one along all tensors at once. */
export function perTensorDirections(parameters: readonly Float32Array[], seed: number): Float32Array[][] {
  const rng = Rng.fromSeed(seed);
  const directions = parameters.map((_, index) => parameters.map((tensor, i) => (i === index ? tensor.map(() => 2 * rng.nextFloat() - 1) : new Float32Array(tensor.length))));
  directions.push(parameters.map((tensor) => tensor.map(() => 2 * rng.nextFloat() - 1)));
  return directions;
}
