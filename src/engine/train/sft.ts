import type { SftBatchPlan } from "./sft-config.js";
import { IGNORE, type SftRow } from "./sft-tokenize.js";

/**
 * SFT batches and their loss (`docs/api/training.md#sft`): consecutive batches in file order, rows
 * longer than the model's maximum sequence length dropped, batches left without trainable tokens
 * skipped; per batch, the token-mean cross-entropy over all its trainable tokens (each row's summed
 * loss divided by the batch's trainable-token count), one optimizer step.
 */
export interface SftBatch {
  /** Position in the plan (and in its learning-rate list). */
  index: number;
  learningRate: number;
  rows: SftRow[];
  numTrajectories: number;
  numTokens: number;
  numTrainableTokens: number;
  numDroppedTrajectories: number;
}

export interface SftBatches {
  batches: SftBatch[];
  numDroppedTrajectories: number;
  /** Batches with no trainable token left (not stepped). */
  numSkippedBatches: number;
}

export function buildSftBatches(rows: readonly SftRow[], plan: SftBatchPlan, maxSequenceLength: number): SftBatches {
  const batches: SftBatch[] = [];
  let numDroppedTrajectories = 0;
  let numSkippedBatches = 0;
  plan.learningRates.forEach((learningRate, index) => {
    const members = rows.slice(index * plan.batchSize, (index + 1) * plan.batchSize);
    const kept = members.filter((row) => row.tokens.length <= maxSequenceLength);
    const dropped = members.length - kept.length;
    numDroppedTrajectories += dropped;
    const numTrainableTokens = kept.reduce((sum, row) => sum + row.numTrainableTokens, 0);
    if (numTrainableTokens === 0) {
      numSkippedBatches++;
      return;
    }
    batches.push({
      index,
      learningRate,
      rows: kept,
      numTrajectories: kept.length,
      numTokens: kept.reduce((sum, row) => sum + row.tokens.length, 0),
      numTrainableTokens,
      numDroppedTrajectories: dropped,
    });
  });
  return { batches, numDroppedTrajectories, numSkippedBatches };
}

/** A row in prediction layout: position p predicts tokens[p + 1]; mask 1 where that token is labelled. */
export interface SftLossInputs {
  targets: Int32Array;
  mask: Uint8Array;
}

export function sftLossInputs(row: SftRow): SftLossInputs {
  const n = row.tokens.length;
  const targets = new Int32Array(n);
  const mask = new Uint8Array(n);
  for (let p = 0; p + 1 < n; p++) {
    targets[p] = row.tokens[p + 1]!;
    mask[p] = row.labels[p + 1] === IGNORE ? 0 : 1;
  }
  return { targets, mask };
}

export interface SftBatchLoss {
  loss: number;
  /** dLoss/dℓ for each row, in prediction layout. */
  gradients: Float64Array[];
  numTrainableTokens: number;
}

/** Loss = −Σ ℓ·m / N over the batch (N its trainable tokens); dLoss/dℓ = −m / N. */
export function sftBatchLoss(rows: readonly { mask: Uint8Array; logprobs: Float64Array }[]): SftBatchLoss {
  const count = rows.reduce((sum, row) => sum + row.mask.reduce((a, b) => a + b, 0), 0);
  let loss = 0;
  const gradients = rows.map(({ mask, logprobs }) => {
    if (logprobs.length !== mask.length) throw new RangeError(`logprobs has ${logprobs.length} entries, the row has ${mask.length}`);
    const gradient = new Float64Array(mask.length);
    if (count === 0) return gradient;
    for (let p = 0; p < mask.length; p++) {
      if (!mask[p]) continue;
      loss -= logprobs[p]! / count;
      gradient[p] = -1 / count;
    }
    return gradient;
  });
  return { loss, gradients, numTrainableTokens: count };
}
