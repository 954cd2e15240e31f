import { isJsonObject } from "../../store/trace/object-class.js";

/**
 * Weave's `auto_summarize` (`weave/flow/scorer.py`), what an SDK-run evaluation reports per scorer:
 * the type of the first non-null value decides — booleans give `{true_count, true_fraction}`,
 * numbers `{mean}`, objects are summarised key by key (a key whose summary has a key of its own
 * name is merged flat); anything else has no summary (undefined, Python's None). An empty list
 * summarises to `{}`.
 */
export function autoSummarize(values: unknown[]): Record<string, unknown> | undefined {
  if (values.length === 0) return {};
  const present = values.filter((value) => value !== null && value !== undefined);
  if (present.length === 0) return undefined;
  const first = present[0];
  if (typeof first === "boolean") {
    const trueCount = present.filter(Boolean).length;
    return { true_count: trueCount, true_fraction: trueCount / present.length };
  }
  if (typeof first === "number") {
    const numbers = present.filter((value): value is number => typeof value === "number");
    return { mean: numbers.reduce((sum, value) => sum + value, 0) / numbers.length };
  }
  if (isJsonObject(first)) {
    const objects = present.filter(isJsonObject);
    const keys = [...new Set(objects.flatMap((value) => Object.keys(value)))];
    const result: Record<string, unknown> = {};
    for (const key of keys) {
      const summary = autoSummarize(objects.map((value) => value[key]));
      if (summary === undefined) continue;
      if (key in summary) Object.assign(result, summary);
      else result[key] = summary;
    }
    return Object.keys(result).length > 0 ? result : undefined;
  }
  return undefined;
}

/**
 * What finishing a v2 evaluation run reports (Weave's `evaluation_run_finish`): per scorer, the
 * mean of its numeric scores across the run's predict_and_score outputs, and the mean of numeric
 * model outputs under `output`. Booleans, strings and nested objects are not averaged.
 */
export function scoreMeans(outputs: Record<string, unknown>[]): Record<string, { mean: number }> {
  const byScorer = new Map<string, number[]>();
  const modelOutputs: number[] = [];
  for (const output of outputs) {
    if (typeof output.output === "number") modelOutputs.push(output.output);
    if (!isJsonObject(output.scores)) continue;
    for (const [scorer, value] of Object.entries(output.scores)) {
      const values = byScorer.get(scorer) ?? [];
      byScorer.set(scorer, values);
      if (typeof value === "number") values.push(value);
    }
  }
  const mean = (values: number[]) => ({ mean: values.reduce((sum, value) => sum + value, 0) / values.length });
  const result: Record<string, { mean: number }> = {};
  for (const [scorer, values] of byScorer) if (values.length > 0) result[scorer] = mean(values);
  if (modelOutputs.length > 0) result.output = mean(modelOutputs);
  return result;
}
