/**
 * Group-relative advantages (`docs/api/training.md#advantages`): each trajectory's reward minus its group's
 * mean, divided by the group's population standard deviation (+1e-6) when rewards are scaled.
 */

export function groupAdvantages(rewards: readonly number[], scaleRewards: boolean): number[] {
  if (rewards.length === 0) return [];
  const mean = rewards.reduce((sum, reward) => sum + reward, 0) / rewards.length;
  const std = Math.sqrt(rewards.reduce((sum, reward) => sum + (reward - mean) ** 2, 0) / rewards.length);
  return rewards.map((reward) => (scaleRewards ? (reward - mean) / (std + 1e-6) : reward - mean));
}

/** A group teaches nothing when it has at most one trajectory or all its rewards are equal within 1e-12. */
export function rewardsHaveZeroVariance(rewards: readonly number[]): boolean {
  if (rewards.length <= 1) return true;
  const first = rewards[0]!;
  return rewards.every((reward) => Math.abs(reward - first) <= 1e-12);
}

/** Population standard deviation (numpy's `std` with ddof=0). */
export function populationStdDev(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length);
}
