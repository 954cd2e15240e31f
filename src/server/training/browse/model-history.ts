import { trajectoryGroupLogMetrics } from "../../../engine/train/log-metrics.js";
import { decodeJson } from "../../../store/json.js";
import type { ModelHistoryRows } from "../../../store/model-history.js";
import type { RlJobInput } from "../../../worker/job-input.js";

export interface StepMetrics {
  step: number;
  metrics: Record<string, number>;
}

/**
 * A model's metrics per step, for charts. Each step merges:
 * - what `POST /log` stored on that step's checkpoint (`{split}/{metric}`, e.g. `train/reward`);
 * - for a training job that started from that step: `job/reward`, `job/reward_std_dev`,
 *   `job/exception_rate` of the trajectory groups it was given (RL), and the mean of each
 *   gradient_step metric as `grad/{name}` (loss, entropy, kl_policy_ref, grad_norm, learning_rate…).
 * A job is placed at its base step: its rollouts were sampled from that checkpoint, and its loss
 * was measured on them. Jobs still running count with the gradient steps they have taken so far.
 */
export function buildModelHistory(rows: ModelHistoryRows): StepMetrics[] {
  const steps = new Map<number, Record<string, number>>();
  const at = (step: number) => {
    let metrics = steps.get(step);
    if (!metrics) steps.set(step, (metrics = {}));
    return metrics;
  };
  for (const checkpoint of rows.checkpoints) Object.assign(at(checkpoint.step), checkpoint.metrics);
  for (const job of rows.jobs) {
    const metrics = at(job.baseStep);
    if (job.kind === "rl") {
      const groups = decodeJson<RlJobInput>(job.input).trajectory_groups;
      for (const [name, value] of Object.entries(trajectoryGroupLogMetrics(groups))) metrics[`job/${name}`] = value;
    }
    for (const [name, value] of Object.entries(meanOfEach(rows.gradientSteps.get(job.id) ?? []))) metrics[`grad/${name}`] = value;
  }
  return [...steps.entries()].sort(([a], [b]) => a - b).map(([step, metrics]) => ({ step, metrics }));
}

/** The mean of every numeric key over the events that report it. */
function meanOfEach(events: readonly Record<string, unknown>[]): Record<string, number> {
  const sums = new Map<string, { total: number; count: number }>();
  for (const data of events) {
    for (const [name, value] of Object.entries(data)) {
      if (typeof value !== "number" || !Number.isFinite(value)) continue;
      const sum = sums.get(name) ?? { total: 0, count: 0 };
      sum.total += value;
      sum.count += 1;
      sums.set(name, sum);
    }
  }
  return Object.fromEntries([...sums].map(([name, { total, count }]) => [name, total / count]));
}
