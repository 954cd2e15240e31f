import type { TrajectoryGroup } from "../../worker/trajectories.js";

const COMPUTED = ["reward", "exception_rate", "reward_std_dev"];

/**
 * The metrics of one /log call (spec/training.md §2.3, after ART's LocalBackend `_log`):
 * - `reward`: mean reward over all trajectories;
 * - `exception_rate`: exceptions / (trajectories + exceptions);
 * - `reward_std_dev`: mean, over groups with ≥ 2 trajectories, of the population std of rewards;
 * - every key of `trajectory.metrics`, averaged over the trajectories that have it (bools as 0/1).
 * A metric with nothing to average is left out (JSON has no NaN). Keys are not yet prefixed.
 */
export function computeLogMetrics(groups: Pick<TrajectoryGroup, "trajectories" | "exceptions">[]): Record<string, number> {
  const metrics: Record<string, number> = {};
  const trajectories = groups.flatMap((group) => group.trajectories);
  const exceptions = groups.reduce((sum, group) => sum + group.exceptions.length, 0);
  if (trajectories.length > 0) metrics.reward = mean(trajectories.map((trajectory) => trajectory.reward));
  if (trajectories.length + exceptions > 0) metrics.exception_rate = exceptions / (trajectories.length + exceptions);
  const stds = groups.filter((group) => group.trajectories.length >= 2).map((group) => populationStd(group.trajectories.map((trajectory) => trajectory.reward)));
  if (stds.length > 0) metrics.reward_std_dev = mean(stds);

  const custom = new Map<string, number[]>();
  for (const trajectory of trajectories) {
    for (const [key, value] of Object.entries(trajectory.metrics)) {
      if (COMPUTED.includes(key)) continue;
      const values = custom.get(key) ?? [];
      values.push(typeof value === "boolean" ? Number(value) : value);
      custom.set(key, values);
    }
  }
  for (const [key, values] of custom) metrics[key] = mean(values);
  return metrics;
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function populationStd(values: number[]): number {
  const mu = mean(values);
  return Math.sqrt(mean(values.map((value) => (value - mu) ** 2)));
}
