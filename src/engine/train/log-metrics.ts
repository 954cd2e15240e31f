import { populationStdDev } from "./advantages.js";
import type { TrajectoryGroupJson } from "./trajectory.js";

/**
 * Metrics of `POST /v1/preview/models/{id}/log` (`spec/training.md` §2.3), before the
 * `{split}/` prefix: `reward` (mean over trajectories), `exception_rate` (exceptions over
 * trajectories + exceptions), `reward_std_dev` (mean over groups with ≥ 2 trajectories of the
 * population std of their rewards; 0 when there is none) and each key of the trajectories'
 * `metrics`, averaged over the trajectories that report it (booleans count as 0/1). A metric with
 * no value at all (e.g. `reward` without trajectories) is left out.
 */
export function trajectoryGroupLogMetrics(groups: readonly TrajectoryGroupJson[]): Record<string, number> {
  const values = new Map<string, number[]>([
    ["exception_rate", []],
    ["reward", []],
  ]);
  const push = (key: string, value: number) => {
    const list = values.get(key) ?? [];
    list.push(value);
    values.set(key, list);
  };
  const groupStdDevs: number[] = [];
  for (const group of groups) {
    const rewards: number[] = [];
    for (const trajectory of group.trajectories ?? []) {
      push("exception_rate", 0);
      const reward = typeof trajectory.reward === "number" ? trajectory.reward : 0;
      rewards.push(reward);
      push("reward", reward);
      for (const [key, raw] of Object.entries(trajectory.metrics ?? {})) {
        const value = typeof raw === "boolean" ? Number(raw) : raw;
        if (typeof value === "number" && Number.isFinite(value)) push(key, value);
      }
    }
    for (const _exception of group.exceptions ?? []) push("exception_rate", 1);
    if (rewards.length > 1) groupStdDevs.push(populationStdDev(rewards));
  }
  const metrics: Record<string, number> = {};
  for (const [key, list] of values) if (list.length > 0) metrics[key] = list.reduce((a, b) => a + b, 0) / list.length;
  metrics.reward_std_dev = groupStdDevs.length > 0 ? groupStdDevs.reduce((a, b) => a + b, 0) / groupStdDevs.length : 0;
  return metrics;
}
