import { expNonPositive, maxOf } from "../../sampling/fast-math.js";
import type { TokenLogprobsArgs, TokenLogprobsBackwardArgs } from "../types.js";

/**
 * Per row: the max, Σ exp(x − max) and Σ exp(x − max)·x, in doubles and in index order, with the
 * sampler's exp (`expNonPositive`): the native kernel repeats exactly these operations, and the
 * sampler's log-sum-exp sums the same way, so all three agree bit for bit.
 */
export function tokenLogprobs(args: TokenLogprobsArgs): void {
  const { logits, rows, vocab, normalizers, logprobs, entropies } = args;
  for (let r = 0; r < rows; r++) {
    const row = logits.subarray(r * vocab, (r + 1) * vocab);
    const max = maxOf(row, vocab);
    let sum = 0;
    let weighted = 0;
    for (let j = 0; j < vocab; j++) {
      const e = expNonPositive(row[j]! - max);
      sum += e;
      weighted += e * row[j]!;
    }
    // Scratch until `finishTokenLogprobs`: the max, the sum and the weighted sum.
    normalizers[r] = max;
    logprobs[r] = sum;
    entropies[r] = weighted;
  }
  finishTokenLogprobs(args);
}

/**
 * Turns the per-row sums left in the outputs (max in `normalizers`, Σe in `logprobs`, Σe·x in
 * `entropies`) into the results. The one logarithm per row is JavaScript's `Math.log` for every
 * backend, as in the sampler, since C's `log` may round its last bit differently.
 */
export function finishTokenLogprobs(args: TokenLogprobsArgs): void {
  const { logits, rows, vocab, targets, normalizers, logprobs, entropies } = args;
  for (let r = 0; r < rows; r++) {
    const target = targets[r]!;
    if (!(target >= 0 && target < vocab)) throw new RangeError(`tokenLogprobs: target token ${target} is outside the vocabulary (${vocab})`);
    const sum = logprobs[r]!;
    const normalizer = normalizers[r]! + Math.log(sum);
    normalizers[r] = normalizer;
    logprobs[r] = logits[r * vocab + target]! - normalizer;
    entropies[r] = normalizer - entropies[r]! / sum;
  }
}

/** dℓ/dlogits = g·(onehot(target) − exp(logits − normalizer)), in place. */
export function tokenLogprobsBackward(args: TokenLogprobsBackwardArgs): void {
  const { logits, rows, vocab, targets, normalizers, gradients } = args;
  for (let r = 0; r < rows; r++) {
    const g = gradients[r]!;
    const normalizer = normalizers[r]!;
    const offset = r * vocab;
    for (let j = 0; j < vocab; j++) logits[offset + j] = -g * expNonPositive(logits[offset + j]! - normalizer);
    logits[offset + targets[r]!] += g;
  }
}
