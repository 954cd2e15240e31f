import type { RlLossInputs } from "./loss-inputs.js";

export type ImportanceSamplingLevel = "token" | "sequence" | "average" | "geometric_average";

export interface RatioOptions {
  importanceSamplingLevel: ImportanceSamplingLevel;
  maxImportanceSamplingWeight: number | null;
  maskProbRatio: boolean;
  epsilon: number;
  epsilonHigh: number;
}

/**
 * Importance ratios ρ_t of the trained tokens (`docs/api/training.md#rl-loss` steps 2–5) with what the
 * gradient needs: Δ_t = ℓ_t − ℓ°_t, r_t = exp(Δ_t), s = exp(mean of Δ over the tokens of the same
 * result) and ρ_t = r_t | s | (r_t + s)/2 | √r_t·√s by level; then the optional cap and the
 * optional mask outside (1 − ε, 1 + ε_high).
 */
export interface Ratios {
  rho: Float64Array;
  /** 1 where dρ passes the cap and the mask; 0 where either replaced ρ by a constant. */
  gate: Float64Array;
  /** ∂ρ_t/∂Δ_t through the token's own ratio. */
  dRhoDDelta: Float64Array;
  /** ∂ρ_t/∂(mean Δ of its result) through the sequence ratio. */
  dRhoDMean: Float64Array;
  /** Trained tokens per result (group id). */
  groupSize: Map<number, number>;
}

export function importanceRatios(inputs: RlLossInputs, logprobs: Float64Array, old: Float64Array, options: RatioOptions): Ratios {
  const n = inputs.mask.length;
  const ratios: Ratios = {
    rho: new Float64Array(n),
    gate: new Float64Array(n),
    dRhoDDelta: new Float64Array(n),
    dRhoDMean: new Float64Array(n),
    groupSize: new Map(),
  };
  const groupSum = new Map<number, number>();
  for (let t = 0; t < n; t++) {
    if (!inputs.mask[t]) continue;
    const group = inputs.groupIds[t]!;
    groupSum.set(group, (groupSum.get(group) ?? 0) + (logprobs[t]! - old[t]!));
    ratios.groupSize.set(group, (ratios.groupSize.get(group) ?? 0) + 1);
  }
  const cap = options.maxImportanceSamplingWeight;
  for (let t = 0; t < n; t++) {
    if (!inputs.mask[t]) continue;
    const group = inputs.groupIds[t]!;
    const r = Math.exp(logprobs[t]! - old[t]!);
    const s = Math.exp(groupSum.get(group)! / ratios.groupSize.get(group)!);
    let rho: number;
    let direct: number;
    let viaMean: number;
    switch (options.importanceSamplingLevel) {
      case "token":
        [rho, direct, viaMean] = [r, r, 0];
        break;
      case "sequence":
        [rho, direct, viaMean] = [s, 0, s];
        break;
      case "average":
        [rho, direct, viaMean] = [(r + s) / 2, r / 2, s / 2];
        break;
      case "geometric_average":
        rho = Math.sqrt(r) * Math.sqrt(s);
        [direct, viaMean] = [rho / 2, rho / 2];
        break;
    }
    let gate = 1;
    if (cap && rho > cap) [rho, gate] = [cap, 0];
    if (options.maskProbRatio && !(rho > 1 - options.epsilon && rho < 1 + options.epsilonHigh)) [rho, gate] = [0, 0];
    ratios.rho[t] = rho;
    ratios.gate[t] = gate;
    ratios.dRhoDDelta[t] = direct;
    ratios.dRhoDMean[t] = viaMean;
  }
  return ratios;
}
