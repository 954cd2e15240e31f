import type { CallSchema } from "../../store/trace/calls/types.js";
import { isJsonObject } from "../../store/trace/object-class.js";
import type { EvalRow } from "./result-rows.js";

interface ScorerStats {
  scorer_key: string;
  path: string | null;
  value_type: "binary" | "continuous" | "text";
  trial_count: number;
  numeric_count: number;
  numeric_mean: number | null;
  pass_true_count: number;
  pass_known_count: number;
  pass_rate: number | null;
  pass_signal_coverage: number | null;
}

interface EvaluationSummary {
  evaluation_call_id: string;
  trial_count: number;
  scorer_stats: ScorerStats[];
  predict_total_tokens: number | null;
  predict_total_cost: number | null;
  evaluation_ref: string | null;
  model_ref: string | null;
  display_name: string | null;
  trace_id: string | null;
  started_at: string | null;
}

/** Adds one scorer output to the statistics, one entry per leaf of a nested output (Weave's `_process_scorer_output`). */
function addScore(stats: Map<string, ScorerStats>, scorerKey: string, path: string[], value: unknown): void {
  const type = typeof value === "boolean" ? "binary" : typeof value === "number" ? "continuous" : typeof value === "string" ? "text" : undefined;
  if (!type) {
    if (isJsonObject(value)) for (const [key, inner] of Object.entries(value)) addScore(stats, scorerKey, [...path, key], inner);
    return;
  }
  const pathText = path.length > 0 ? path.join(".") : null;
  const id = `${scorerKey}\u0000${pathText ?? ""}`;
  let entry = stats.get(id);
  if (!entry) {
    entry = { scorer_key: scorerKey, path: pathText, value_type: type, trial_count: 0, numeric_count: 0, numeric_mean: null, pass_true_count: 0, pass_known_count: 0, pass_rate: null, pass_signal_coverage: null };
    stats.set(id, entry);
  }
  entry.trial_count++;
  if (typeof value === "boolean") {
    entry.pass_known_count++;
    if (value) entry.pass_true_count++;
  } else if (typeof value === "number") {
    entry.numeric_mean = ((entry.numeric_mean ?? 0) * entry.numeric_count + value) / (entry.numeric_count + 1);
    entry.numeric_count++;
  }
}

/**
 * Per-evaluation statistics over grouped rows (Weave's `compute_summary_from_rows`): trial counts,
 * per scorer leaf its type, mean and pass rate, token and cost totals of the model calls, and the
 * evaluation call's refs, name, trace and start time.
 */
export function summarizeRows(rows: EvalRow[], roots: CallSchema[]): { row_count: number; evaluations: EvaluationSummary[] } {
  const byId = new Map(roots.map((call) => [call.id, call]));
  const summaries = new Map<string, { summary: EvaluationSummary; stats: Map<string, ScorerStats> }>();
  for (const row of rows) {
    for (const entry of row.evaluations) {
      let item = summaries.get(entry.evaluation_call_id);
      if (!item) {
        const root = byId.get(entry.evaluation_call_id);
        const inputs = root?.inputs ?? {};
        const ref = (value: unknown) => (typeof value === "string" ? value : null);
        item = {
          stats: new Map(),
          summary: {
            evaluation_call_id: entry.evaluation_call_id,
            trial_count: 0,
            scorer_stats: [],
            predict_total_tokens: null,
            predict_total_cost: null,
            evaluation_ref: ref(inputs.self ?? inputs.this),
            model_ref: ref(inputs.model),
            display_name: root?.display_name ?? null,
            trace_id: root?.trace_id ?? null,
            started_at: root?.started_at ?? null,
          },
        };
        summaries.set(entry.evaluation_call_id, item);
      }
      for (const trial of entry.trials) {
        item.summary.trial_count++;
        if (trial.total_tokens !== null) item.summary.predict_total_tokens = (item.summary.predict_total_tokens ?? 0) + trial.total_tokens;
        if (trial.total_cost !== null) item.summary.predict_total_cost = (item.summary.predict_total_cost ?? 0) + trial.total_cost;
        for (const [key, value] of Object.entries(trial.scores)) addScore(item.stats, key, [], value);
      }
    }
  }
  const evaluations = [...summaries.values()].map(({ summary, stats }) => {
    for (const entry of stats.values()) {
      if (entry.pass_known_count > 0) entry.pass_rate = entry.pass_true_count / entry.pass_known_count;
      if (entry.trial_count > 0) entry.pass_signal_coverage = entry.pass_known_count / entry.trial_count;
    }
    return { ...summary, scorer_stats: [...stats.values()] };
  });
  return { row_count: rows.length, evaluations };
}
