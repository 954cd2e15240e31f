import { expNonPositive, maxOf } from "./fast-math.js";
import type { Rng } from "./rng.js";
import { kthLargest, selectNucleus } from "./select.js";

/** Reusable vocabulary-sized buffers (one set per engine thread, never per step). */
export interface DrawBuffers {
  /** Unnormalized probability of every token (0 for filtered ones). */
  tokenWeights: Float64Array;
  /** Compacted candidate ids and their weights, for top-p. */
  candidateIds: Int32Array;
  candidateWeights: Float64Array;
  /** Scratch for quickselect. */
  values: Float32Array;
}

export interface RandomFilters {
  temperature: number;
  minP: number;
  /** ≤ 0 disables. */
  topK: number;
  topP: number;
}

/**
 * The random path of vLLM's sampler (`docs/api/chat.md#sampling-order` step 8) on processed logits: temperature,
 * min_p, top_k, top_p, then one exact categorical draw. Returns -1 when no token is left.
 *
 * min_p and top_k both keep "every logit at or above a threshold" (min_p: p ≥ min_p·p_max, i.e.
 * x ≥ x_max + T·ln(min_p); top_k: x ≥ the k-th largest, ties kept as vLLM does), so they combine
 * into one threshold with no softmax and no sort. top_p then runs a linear-time nucleus selection
 * on the survivors, and the draw walks the cumulative weights with a single uniform number.
 */
export function drawToken(logits: Float32Array, length: number, filters: RandomFilters, rng: Rng, buffers: DrawBuffers): number {
  const max = maxOf(logits, length);
  if (max === -Infinity || Number.isNaN(max)) return -1;
  const { temperature, minP, topP } = filters;
  const inverseTemperature = 1 / temperature;

  let threshold = -Infinity;
  if (minP > 0) threshold = max + temperature * Math.log(minP);
  if (filters.topK > 0 && filters.topK < length) {
    const kth = kthLargest(logits, filters.topK, buffers.values, length);
    if (kth > threshold) threshold = kth;
  }

  const ids = buffers.candidateIds;
  const weights = buffers.candidateWeights;
  let count = 0;
  let total = 0;
  if (threshold > -Infinity) {
    // min_p / top_k left few tokens: exponentiate only those.
    for (let id = 0; id < length; id++) {
      const x = logits[id]!;
      if (x >= threshold) {
        const weight = expNonPositive((x - max) * inverseTemperature);
        ids[count] = id;
        weights[count++] = weight;
        total += weight;
      }
    }
  } else {
    const tokenWeights = buffers.tokenWeights;
    for (let id = 0; id < length; id++) {
      const weight = expNonPositive((logits[id]! - max) * inverseTemperature);
      tokenWeights[id] = weight;
      total += weight;
    }
    if (topP >= 1) return walk(tokenWeights, length, total, rng);
    // Tokens lighter than (1 - top_p)·total / V can never be in the nucleus: the heavier tokens
    // alone already exceed top_p of the mass. Only the rest goes on to the selection.
    const cutoff = ((1 - topP) * total) / length;
    for (let id = 0; id < length; id++) {
      const weight = tokenWeights[id]!;
      if (weight > 0 && weight >= cutoff) {
        ids[count] = id;
        weights[count++] = weight;
      }
    }
  }

  let kept = count;
  let keptMass = total;
  if (topP < 1) {
    kept = selectNucleus(ids, weights, count, topP * total);
    keptMass = 0;
    for (let i = 0; i < kept; i++) keptMass += weights[i]!;
  }
  const target = rng.nextFloat() * keptMass;
  let cumulative = 0;
  for (let i = 0; i < kept; i++) {
    cumulative += weights[i]!;
    if (cumulative > target) return ids[i]!;
  }
  return kept > 0 ? ids[kept - 1]! : -1;
}

/** One categorical draw over `weights` (unnormalized, summing to `total`). */
function walk(weights: Float64Array, length: number, total: number, rng: Rng): number {
  const target = rng.nextFloat() * total;
  let cumulative = 0;
  let lastPositive = -1;
  for (let id = 0; id < length; id++) {
    const weight = weights[id]!;
    if (weight === 0) continue;
    cumulative += weight;
    lastPositive = id;
    if (cumulative > target) return id;
  }
  return lastPositive;
}
