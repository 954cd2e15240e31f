import type { PackedRow } from "./packing.js";

/**
 * A packed row in prediction layout for the loss: index p describes the token at p + 1, which the
 * model predicts from position p (the last index is padding). The forward pass produces, at each
 * position p, ℓ_p = log softmax(logits_p)[targets[p]] (and the entropy H_p of that distribution);
 * the loss reads ℓ and returns dLoss/dℓ in the same layout.
 */
export interface RlLossInputs {
  /** Token predicted at each position (padding: 0). */
  targets: Int32Array;
  /** 1 where the target token is trained. */
  mask: Uint8Array;
  /** The behaviour policy's logprob of the target: the sampler's, or precalculated; NaN where none. */
  oldLogprobs: Float64Array;
  /** With precalculated old logprobs: the sampler's own (for truncated importance sampling). */
  originalLogprobs?: Float64Array;
  advantages: Float64Array;
  weights: Float64Array;
  /** The result each target belongs to (sequence-level importance ratios average over it). */
  groupIds: Int32Array;
}

export function rlLossInputs(row: PackedRow): RlLossInputs {
  const n = row.tokens.length;
  const inputs: RlLossInputs = {
    targets: new Int32Array(n),
    mask: new Uint8Array(n),
    oldLogprobs: new Float64Array(n).fill(NaN),
    advantages: new Float64Array(n),
    weights: new Float64Array(n),
    groupIds: new Int32Array(n),
  };
  for (let p = 0; p + 1 < n; p++) {
    inputs.targets[p] = p + 1 < row.length ? row.tokens[p + 1]! : 0;
    inputs.mask[p] = row.assistantMask[p + 1]!;
    inputs.oldLogprobs[p] = row.logprobs[p + 1]!;
    inputs.advantages[p] = row.advantages[p + 1]!;
    inputs.weights[p] = row.weights[p + 1]!;
    inputs.groupIds[p] = row.groupIds[p + 1]!;
  }
  return inputs;
}

/**
 * `precalculate_logprobs`: the trainer's own logprobs (prediction layout, computed once with the
 * weights before the job's first step) become the old logprobs; the sampler's are kept as the
 * original ones.
 */
export function withPrecalculatedLogprobs(inputs: RlLossInputs, precalculated: Float64Array): RlLossInputs {
  if (precalculated.length !== inputs.oldLogprobs.length) throw new RangeError("precalculated logprobs must have the row's length");
  return { ...inputs, oldLogprobs: Float64Array.from(precalculated), originalLogprobs: inputs.oldLogprobs };
}
