/**
 * Turns a model's metric history (`GET /v1/preview/models/{id}/history`) into chart data: one x
 * value per step, one series per source, null where a step has no value (uPlot leaves a gap).
 */

export interface HistoryRow {
  step: number;
  metrics: Record<string, number>;
}

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** ±1 std around the values (reward charts): lower and upper bounds per step. */
  band?: { lower: (number | null)[]; upper: (number | null)[] };
}

export interface ChartSpec {
  id: string;
  title: string;
  steps: number[];
  series: ChartSeries[];
}

/** Where reward-like metrics come from: each logged split, then the jobs' own rollouts. */
function rewardSources(rows: readonly HistoryRow[]): { prefix: string; label: string }[] {
  const splits = new Set<string>();
  for (const row of rows) {
    for (const key of Object.keys(row.metrics)) {
      const slash = key.indexOf("/");
      if (slash > 0 && key.slice(0, slash) !== "job" && key.slice(0, slash) !== "grad") splits.add(key.slice(0, slash));
    }
  }
  const ordered = [...splits].sort((a, b) => (a === "train" ? -1 : b === "train" ? 1 : a.localeCompare(b)));
  return [...ordered.map((split) => ({ prefix: split, label: `${split} (logged)` })), { prefix: "job", label: "job rollouts" }];
}

const GRADIENT_CHARTS: { id: string; title: string; metric: string }[] = [
  { id: "loss", title: "Loss", metric: "grad/loss" },
  { id: "entropy", title: "Entropy", metric: "grad/entropy" },
  { id: "kl", title: "KL to reference", metric: "grad/kl_policy_ref" },
  { id: "grad-norm", title: "Gradient norm", metric: "grad/grad_norm" },
  { id: "learning-rate", title: "Learning rate", metric: "grad/learning_rate" },
];

export function historyCharts(rows: readonly HistoryRow[]): ChartSpec[] {
  const sorted = [...rows].sort((a, b) => a.step - b.step);
  const steps = sorted.map((row) => row.step);
  const column = (metric: string) => sorted.map((row) => (Number.isFinite(row.metrics[metric]) ? row.metrics[metric]! : null));
  const hasAny = (values: (number | null)[]) => values.some((value) => value !== null);

  const rewardSeries: ChartSeries[] = [];
  const exceptionSeries: ChartSeries[] = [];
  for (const source of rewardSources(sorted)) {
    const mean = column(`${source.prefix}/reward`);
    if (hasAny(mean)) {
      const std = column(`${source.prefix}/reward_std_dev`);
      const band = hasAny(std)
        ? { lower: mean.map((value, i) => (value === null || std[i] === null ? null : value - std[i]!)), upper: mean.map((value, i) => (value === null || std[i] === null ? null : value + std[i]!)) }
        : undefined;
      rewardSeries.push({ label: source.label, values: mean, ...(band ? { band } : {}) });
    }
    const exceptions = column(`${source.prefix}/exception_rate`);
    if (hasAny(exceptions)) exceptionSeries.push({ label: source.label, values: exceptions });
  }

  // The reward chart is always there (empty until something is measured); the others when they have data.
  const charts: ChartSpec[] = [{ id: "reward", title: "Reward (mean ± std)", steps, series: rewardSeries }];
  for (const chart of GRADIENT_CHARTS) {
    const values = column(chart.metric);
    if (hasAny(values)) charts.push({ id: chart.id, title: chart.title, steps, series: [{ label: chart.metric.slice("grad/".length), values }] });
  }
  if (exceptionSeries.length > 0) charts.push({ id: "exception-rate", title: "Exception rate", steps, series: exceptionSeries });
  return charts;
}

/** The newest reward of a history: the logged train reward, else the jobs' rollouts. */
export function latestReward(rows: readonly HistoryRow[]): number | undefined {
  const sorted = [...rows].sort((a, b) => b.step - a.step);
  for (const metric of ["train/reward", "job/reward"]) {
    const row = sorted.find((candidate) => Number.isFinite(candidate.metrics[metric]));
    if (row) return row.metrics[metric];
  }
  return undefined;
}
