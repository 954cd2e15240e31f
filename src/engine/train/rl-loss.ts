import type { RlLossInputs } from "./loss-inputs.js";
import { importanceRatios, type ImportanceSamplingLevel, type Ratios } from "./importance-ratios.js";

/**
 * The per-token RL loss of one packed row and its exact gradient with respect to the current
 * logprobs ℓ (`docs/api/training.md#rl-loss`), in prediction layout (`loss-inputs.ts`). Stop-gradients are
 * honoured exactly: the CISPO weight, the truncation factor, the kimi-k2 and KL advantage shifts and
 * missing old logprobs (ℓ° := sg(ℓ)) carry no gradient; the PPO ratio does, including the
 * sequence-level ratio, whose mean couples the tokens of one result.
 */
export interface RlLossOptions {
  objective: "cispo" | "ppo";
  /** Lower clip: the ratio is clipped at 1 − epsilon. */
  epsilon: number;
  /** Upper clip: 1 + epsilonHigh. */
  epsilonHigh: number;
  importanceSamplingLevel: ImportanceSamplingLevel;
  /** Cap on the ratio (all tokens, as the reference code does); null or 0 disables. */
  maxImportanceSamplingWeight: number | null;
  /** Zero the ratio outside (1 − ε, 1 + ε_high). */
  maskProbRatio: boolean;
  /** τ: A ← A − τ·sg(ℓ − ℓ°); null or 0 disables. */
  kimiK2Tau: number | null;
  /** β: KL-shaped advantages against reference logprobs; 0 disables. */
  klPenaltyCoef: number;
  klPenaltySource: "current_learner" | "sample";
  /** U: multiply the token loss by sg(min(q, U)); null or 0 disables. */
  truncatedImportanceSampling: number | null;
}

export interface RlLossExtras {
  /** Entropy of each position's predicted distribution (for the entropy metric). */
  entropies?: Float64Array;
  /** Reference-model logprobs of the targets; required when klPenaltyCoef > 0. */
  refLogprobs?: Float64Array;
}

export interface RlRowLoss {
  /** Σ L_t·w_t·m_t / (Σ m_t + 1e-18). */
  loss: number;
  /** dLoss/dℓ_p for every position (0 where not trained). */
  gradient: Float64Array;
  /** Σ H_t·w_t·m_t / (Σ m_t + 1e-18), when entropies were given. */
  entropy: number | null;
  /** k̄, the mean of ℓˢ − ℓʳ over trained tokens, when the KL penalty is on. */
  klPolicyRef: number | null;
  /** Pearson correlation of exp(old) and exp(new) over trained tokens with old logprobs (0 if undefined). */
  probsCorr: number;
  numTrainableTokens: number;
}

export function rlRowLoss(inputs: RlLossInputs, logprobs: Float64Array, options: RlLossOptions, extras: RlLossExtras = {}): RlRowLoss {
  return rlRowLossAt(inputs, logprobs, logprobs, options, extras);
}

/**
 * The same loss with the values that stop-gradients see passed separately (`detached`, equal to
 * `logprobs` in training): as a function of `logprobs` alone, its derivative is the gradient that
 * `rlRowLoss` returns, which is what the finite-difference tests check.
 */
export function rlRowLossAt(inputs: RlLossInputs, logprobs: Float64Array, detached: Float64Array, options: RlLossOptions, extras: RlLossExtras = {}): RlRowLoss {
  const n = inputs.mask.length;
  for (const [name, array] of [
    ["logprobs", logprobs],
    ["detached", detached],
    ["entropies", extras.entropies],
    ["refLogprobs", extras.refLogprobs],
  ] as const) {
    if (array && array.length !== n) throw new RangeError(`${name} has ${array.length} entries, the row has ${n}`);
  }
  const klOn = options.klPenaltyCoef > 0;
  if (klOn && !extras.refLogprobs) throw new Error("the KL penalty needs reference logprobs");

  const old = new Float64Array(n);
  let count = 0;
  for (let t = 0; t < n; t++) {
    if (!inputs.mask[t]) continue;
    count++;
    const given = inputs.oldLogprobs[t]!;
    old[t] = Number.isNaN(given) ? detached[t]! : given;
  }
  const denominator = count + 1e-18;
  const live = importanceRatios(inputs, logprobs, old, options);
  const frozen = importanceRatios(inputs, detached, old, options);

  const advantages = shapedAdvantages(inputs, detached, old, denominator, options, extras);
  const { epsilon, epsilonHigh } = options;
  const gradient = new Float64Array(n);
  const ratioGradient = new Float64Array(n);
  let loss = 0;
  for (let t = 0; t < n; t++) {
    if (!inputs.mask[t]) continue;
    const advantage = advantages.values[t]!;
    const scale = (inputs.weights[t]! * truncationFactor(inputs, t, frozen, old, detached, options)) / denominator;
    if (options.objective === "ppo") {
      const rho = live.rho[t]!;
      const unclipped = rho * advantage;
      const clipped = clip(rho, 1 - epsilon, 1 + epsilonHigh) * advantage;
      loss += -Math.min(unclipped, clipped) * scale;
      // Where the clipped term is strictly smaller the ratio lies outside the clip range: no gradient.
      ratioGradient[t] = unclipped <= clipped ? -advantage * scale * live.gate[t]! : 0;
    } else {
      const weight = clip(frozen.rho[t]!, 1 - epsilon, 1 + epsilonHigh);
      loss += -weight * advantage * logprobs[t]! * scale;
      gradient[t] = -weight * advantage * scale;
    }
  }
  if (options.objective === "ppo") chainRatioGradient(inputs, live, ratioGradient, gradient);

  return {
    loss,
    gradient,
    entropy: extras.entropies ? maskedWeightedSum(inputs, extras.entropies) / denominator : null,
    klPolicyRef: advantages.klPolicyRef,
    probsCorr: probsCorrelation(inputs, logprobs),
    numTrainableTokens: count,
  };
}

/** Advantages after the kimi-k2 shift and the KL penalty (both detached). */
function shapedAdvantages(inputs: RlLossInputs, detached: Float64Array, old: Float64Array, denominator: number, options: RlLossOptions, extras: RlLossExtras) {
  const n = inputs.mask.length;
  const values = Float64Array.from(inputs.advantages);
  const tau = options.kimiK2Tau;
  if (tau) {
    for (let t = 0; t < n; t++) if (inputs.mask[t]) values[t] = values[t]! - tau * (detached[t]! - old[t]!);
  }
  let klPolicyRef: number | null = null;
  if (options.klPenaltyCoef > 0) {
    const ref = extras.refLogprobs!;
    const source = options.klPenaltySource === "sample" ? old : detached;
    const kl = new Float64Array(n);
    let sum = 0;
    for (let t = 0; t < n; t++) {
      if (!inputs.mask[t]) continue;
      kl[t] = source[t]! - ref[t]!;
      sum += kl[t]!;
    }
    klPolicyRef = sum / denominator;
    for (let t = 0; t < n; t++) if (inputs.mask[t]) values[t] = values[t]! + options.klPenaltyCoef * (klPolicyRef - kl[t]!);
  }
  return { values, klPolicyRef };
}

/** sg(min(q, U)) with q = exp(ℓ° − ℓ_original) when the sampler's logprobs were kept, else the (frozen) ratio. */
function truncationFactor(inputs: RlLossInputs, t: number, frozen: Ratios, old: Float64Array, detached: Float64Array, options: RlLossOptions): number {
  const bound = options.truncatedImportanceSampling;
  if (!bound) return 1;
  let q = frozen.rho[t]!;
  if (inputs.originalLogprobs) {
    const original = inputs.originalLogprobs[t]!;
    q = Math.exp(old[t]! - (Number.isNaN(original) ? detached[t]! : original));
  }
  return Math.min(q, bound);
}

/** dLoss/dρ → dLoss/dℓ through the token ratio (direct) and the sequence ratio (shared by the result's tokens). */
function chainRatioGradient(inputs: RlLossInputs, ratios: Ratios, ratioGradient: Float64Array, gradient: Float64Array): void {
  const perGroup = new Map<number, number>();
  for (let t = 0; t < gradient.length; t++) {
    if (!inputs.mask[t]) continue;
    gradient[t] = gradient[t]! + ratioGradient[t]! * ratios.dRhoDDelta[t]!;
    const viaSequence = ratioGradient[t]! * ratios.dRhoDMean[t]!;
    if (viaSequence !== 0) perGroup.set(inputs.groupIds[t]!, (perGroup.get(inputs.groupIds[t]!) ?? 0) + viaSequence);
  }
  if (perGroup.size === 0) return;
  for (let t = 0; t < gradient.length; t++) {
    if (!inputs.mask[t]) continue;
    const group = inputs.groupIds[t]!;
    const total = perGroup.get(group);
    if (total !== undefined) gradient[t] = gradient[t]! + total / ratios.groupSize.get(group)!;
  }
}

function maskedWeightedSum(inputs: RlLossInputs, values: Float64Array): number {
  let sum = 0;
  for (let t = 0; t < values.length; t++) if (inputs.mask[t]) sum += values[t]! * inputs.weights[t]!;
  return sum;
}

function probsCorrelation(inputs: RlLossInputs, logprobs: Float64Array): number {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let t = 0; t < logprobs.length; t++) {
    if (!inputs.mask[t] || Number.isNaN(inputs.oldLogprobs[t])) continue;
    xs.push(Math.exp(inputs.oldLogprobs[t]!));
    ys.push(Math.exp(logprobs[t]!));
  }
  return pearson(xs, ys);
}

/** Pearson correlation; 0 when it is undefined (fewer than two points, or a constant side). */
export function pearson(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const meanX = xs.reduce((a, b) => a + b, 0) / n;
  const meanY = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i]! - meanX;
    const dy = ys[i]! - meanY;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (!(sxx > 0) || !(syy > 0) || !Number.isFinite(sxx) || !Number.isFinite(syy)) return 0;
  return sxy / Math.sqrt(sxx * syy);
}

function clip(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}
