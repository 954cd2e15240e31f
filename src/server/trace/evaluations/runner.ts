import { EVALUATE_OP, PREDICT_AND_SCORE_OP, SUMMARIZE_OP } from "../../../trace/evaluations/constants.js";
import { autoSummarize } from "../../../trace/evaluations/summaries.js";
import type { Prediction } from "./llm-model.js";
import type { DatasetRow, EvaluationPlan } from "./plan.js";
import { type CallRecorder, type OpenCall, usageSummary } from "./recorder.js";

/** Rows predicted and scored at once: enough to fill the engine's batches, few enough to show steady progress. */
const ROW_CONCURRENCY = 8;

interface TrialResult {
  output: unknown;
  scores: Record<string, unknown>;
  latency: number;
  usage: Prediction["usage"] | undefined;
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function inPool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

function addUsage(total: Prediction["usage"] | undefined, usage: Prediction["usage"] | undefined): Prediction["usage"] | undefined {
  if (!usage) return total;
  if (!total) return { ...usage };
  return { prompt_tokens: total.prompt_tokens + usage.prompt_tokens, completion_tokens: total.completion_tokens + usage.completion_tokens, total_tokens: total.total_tokens + usage.total_tokens };
}

/** The root `Evaluation.evaluate` call, started before the request answers so status can find it at once. */
export function startEvaluation(recorder: CallRecorder, plan: EvaluationPlan): Promise<OpenCall> {
  return recorder.start(EVALUATE_OP, { inputs: { self: plan.evaluationRef, model: plan.modelInput }, displayName: plan.evaluationName });
}

/**
 * Runs an evaluation as the SDKs run one and records the same call tree: per dataset row and
 * trial an `Evaluation.predict_and_score` call holding the model's `predict` call and one
 * `<Scorer>.score` call per scorer, then `Evaluation.summarize`; the root ends with the summary
 * (Weave's auto-summaries per scorer, of the outputs, and the mean latency) or with the failure.
 */
export async function runEvaluation(recorder: CallRecorder, plan: EvaluationPlan, root: OpenCall, signal: AbortSignal): Promise<void> {
  const trials: { row: DatasetRow; result: TrialResult }[] = [];
  try {
    const work = plan.rows.flatMap((row) => Array.from({ length: plan.trials }, () => row));
    await inPool(work, ROW_CONCURRENCY, async (row) => {
      signal.throwIfAborted();
      trials.push({ row, result: await predictAndScore(recorder, plan, row, root) });
    });
    signal.throwIfAborted();
    const summary = summarize(
      plan,
      trials.map((trial) => trial.result),
    );
    const summarizeCall = await recorder.start(SUMMARIZE_OP, { parentId: root.id, traceId: root.traceId, inputs: { self: plan.evaluationRef } });
    await summarizeCall.end({ output: summary });
    const usage = trials.reduce<Prediction["usage"] | undefined>((total, trial) => addUsage(total, trial.result.usage), undefined);
    await root.end({ output: summary, summary: usage ? usageSummary(plan.model.modelId, usage) : {} });
  } catch (error) {
    const message = signal.aborted ? "The evaluation was interrupted: the server shut down" : error instanceof Error ? error.message : String(error);
    await root.end({ exception: message });
  }
}

async function predictAndScore(recorder: CallRecorder, plan: EvaluationPlan, row: DatasetRow, root: OpenCall): Promise<TrialResult> {
  const pas = await recorder.start(PREDICT_AND_SCORE_OP, { parentId: root.id, traceId: root.traceId, inputs: { self: plan.evaluationRef, model: plan.modelInput, example: row.ref } });
  const { user_input: userInput, config: _config, ...templateVars } = row.value;
  const startedAt = performance.now();
  const prediction = await recorder.predict(plan.model, plan.modelInput, { userInput, templateVars }, pas);
  const latency = (performance.now() - startedAt) / 1000;
  const scores: Record<string, unknown> = {};
  const output = "error" in prediction ? null : prediction.output;
  // A model that failed leaves nothing to score; its predict call carries the error.
  if (!("error" in prediction)) {
    for (const scorer of plan.scorers) {
      const scored = await recorder.score(scorer, output, row.value, pas);
      if ("value" in scored) scores[scorer.name] = scored.value;
    }
  }
  const usage = "error" in prediction ? undefined : prediction.usage;
  await pas.end({ output: { output, scores, model_latency: latency }, summary: usage ? usageSummary(plan.model.modelId, usage) : {} });
  return { output, scores, latency, usage };
}

/** Weave's evaluation summary: the outputs' and each scorer's auto-summary, and the mean model latency. */
function summarize(plan: EvaluationPlan, results: TrialResult[]): Record<string, unknown> {
  const summary: Record<string, unknown> = {};
  const outputs = autoSummarize(results.map((result) => result.output));
  if (outputs && Object.keys(outputs).length > 0) summary.output = outputs;
  for (const scorer of plan.scorers) {
    const scored = autoSummarize(results.map((result) => result.scores[scorer.name] ?? null));
    if (scored !== undefined) summary[scorer.name] = scored;
  }
  const latencies = results.map((result) => result.latency);
  summary.model_latency = { mean: latencies.length > 0 ? latencies.reduce((sum, value) => sum + value, 0) / latencies.length : 0 };
  return summary;
}
