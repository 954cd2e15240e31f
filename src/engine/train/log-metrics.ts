import { populationStdDev } from "./advantages.js";

/** What the metrics read of a trajectory group. */
export interface LoggedGroup {
  trajectories?: readonly { reward?: unknown; metrics?: Record<string, unknown> | null }[] | null;
  exceptions?: readonly unknown[] | null;
}

/** Metrics this module computes itself; a trajectory metric of the same name is not averaged in. */
const COMPUTED = new Set(["reward", "exception_rate", "reward_std_dev"]);

/**
 * Metrics of `POST /v1/preview/models/{id}/log` (`docs/api/training.md#log`, after ART's
 * LocalBackend `_log`), before the `{split}/` prefix:
 * - `reward`: mean reward over all trajectories;
 * - `exception_rate`: exceptions / (trajectories + exceptions);
 * - `reward_std_dev`: mean, over groups with ≥ 2 trajectories, of the population std of rewards;
 * - every key of the trajectories' `metrics`, averaged over the trajectories that report it
 *   (booleans count as 0/1, non-numbers and non-finite values are skipped).
 * A metric with nothing to average is left out (JSON has no NaN).
 */
export function trajectoryGroupLogMetrics(groups: readonly LoggedGroup[]): Record<string, number> {
  const rewards: number[] = [];
  const groupStdDevs: number[] = [];
  const custom = new Map<string, number[]>();
  let exceptions = 0;
  for (const group of groups) {
    const groupRewards = (group.trajectories ?? []).map((trajectory) => (typeof trajectory.reward === "number" ? trajectory.reward : 0));
    rewards.push(...groupRewards);
    if (groupRewards.length >= 2) groupStdDevs.push(populationStdDev(groupRewards));
    exceptions += Array.isArray(group.exceptions) ? group.exceptions.length : 0;
    for (const trajectory of group.trajectories ?? []) {
      for (const [key, raw] of Object.entries(trajectory.metrics ?? {})) {
        const value = typeof raw === "boolean" ? Number(raw) : raw;
        if (COMPUTED.has(key) || typeof value !== "number" || !Number.isFinite(value)) continue;
        const values = custom.get(key) ?? [];
        values.push(value);
        custom.set(key, values);
      }
    }
  }
  const metrics: Record<string, number> = {};
  if (rewards.length > 0) metrics.reward = mean(rewards);
  if (rewards.length + exceptions > 0) metrics.exception_rate = exceptions / (rewards.length + exceptions);
  if (groupStdDevs.length > 0) metrics.reward_std_dev = mean(groupStdDevs);
  for (const [key, values] of custom) metrics[key] = mean(values);
  return metrics;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
