import type { AdamWStepArgs } from "../types.js";

/** The per-step scalars of AdamW, computed once per tensor here for both backends. */
export function adamwScalars(args: AdamWStepArgs): { stepSize: number; biasCorrection2Sqrt: number; decay: number } {
  const { lr, step, beta1, beta2, weightDecay } = args;
  return { stepSize: lr / (1 - beta1 ** step), biasCorrection2Sqrt: Math.sqrt(1 - beta2 ** step), decay: 1 - lr * weightDecay };
}

/** Checks that a step's tensors line up (the native kernel relies on it). */
export function checkAdamwTensors(args: AdamWStepArgs): void {
  const { params, grads, expAvg, expAvgSq } = args;
  if (grads.length !== params.length || expAvg.length !== params.length || expAvgSq.length !== params.length) throw new RangeError("adamwStep: params, grads and moments must have one length");
}

/**
 * One AdamW update as `torch.optim.AdamW` computes it: moments in f32, the update in doubles,
 * rounded once. Returns how many updated weights are not finite.
 */
export function adamwStep(args: AdamWStepArgs): number {
  checkAdamwTensors(args);
  const { params, grads, expAvg, expAvgSq, beta1, beta2, eps } = args;
  const { stepSize, biasCorrection2Sqrt, decay } = adamwScalars(args);
  let nonFinite = 0;
  for (let j = 0; j < params.length; j++) {
    const g = grads[j]!;
    const m = beta1 * expAvg[j]! + (1 - beta1) * g;
    const v = beta2 * expAvgSq[j]! + (1 - beta2) * g * g;
    expAvg[j] = m;
    expAvgSq[j] = v;
    const updated = Math.fround(params[j]! * decay - (stepSize * m) / (Math.sqrt(v) / biasCorrection2Sqrt + eps));
    if (!Number.isFinite(updated)) nonFinite++;
    params[j] = updated;
  }
  return nonFinite;
}
