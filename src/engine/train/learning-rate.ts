import type { PackedRow } from "./packing.js";

/**
 * Learning rate of each RL optimizer step (`docs/api/training.md#optimizer-steps`,
 * `docs/api/training.md#reward-std-lr`): the job's rate, times K^p for K trajectories in the packed row,
 * times the reward-std-dev multiplier when that is enabled.
 */

/** K = distinct group ids − distinct parent ids over the whole row (padding included on both sides). */
export function numTrajectoriesInRow(row: Pick<PackedRow, "groupIds" | "parentIds">): number {
  return new Set(row.groupIds).size - new Set(row.parentIds).size;
}

/**
 * K^p with K at least 1: rows whose results share no prompt tokens can count K = 0, which would
 * make the rate 0 (p > 0) or infinite (p < 0).
 */
export function rowLearningRate(baseLearningRate: number, row: Pick<PackedRow, "groupIds" | "parentIds">, power: number, rewardStdDevMultiplier = 1): number {
  return baseLearningRate * Math.max(numTrajectoriesInRow(row), 1) ** power * rewardStdDevMultiplier;
}

export interface StepValue {
  step: number;
  value: number;
}

/**
 * From the history of `train/reward_std_dev` (several values of one step are averaged): fit
 * y = a·step + b by least squares over the steps; with b > 0 the multiplier is (a·last step + b)/b,
 * otherwise (or with fewer than two steps) 1.
 */
export function rewardStdDevLearningRateMultiplier(history: readonly StepValue[]): number {
  const byStep = new Map<number, { sum: number; count: number }>();
  for (const { step, value } of history) {
    if (!Number.isFinite(value)) continue;
    const entry = byStep.get(step) ?? { sum: 0, count: 0 };
    entry.sum += value;
    entry.count++;
    byStep.set(step, entry);
  }
  const points = [...byStep.entries()].sort(([a], [b]) => a - b).map(([step, { sum, count }]) => ({ x: step, y: sum / count }));
  if (points.length < 2) return 1;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / points.length;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / points.length;
  let sxy = 0;
  let sxx = 0;
  for (const { x, y } of points) {
    sxy += (x - meanX) * (y - meanY);
    sxx += (x - meanX) ** 2;
  }
  const slope = sxy / sxx;
  const intercept = meanY - slope * meanX;
  if (!(intercept > 0)) return 1;
  return (slope * points[points.length - 1]!.x + intercept) / intercept;
}
