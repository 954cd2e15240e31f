import type { CallSchema } from "../../store/trace/calls/types.js";
import { bytesDigest } from "../digest.js";
import { pythonJsonDumps } from "../../python-format.js";
import { isJsonObject } from "../../store/trace/object-class.js";
import { isWeaveRefString, parseWeaveRef, refName } from "../../store/trace/refs.js";
import { millisBetween } from "../../store/trace/timestamps.js";
import { isMarkedScorerCall, isScorerCall, opBaseName, weaveAttributes } from "./constants.js";

/** One predict_and_score call of an evaluation, as eval_results reports it. */
export interface EvalTrial {
  predict_and_score_call_id: string;
  predict_call_id: string | null;
  model_output: unknown;
  scores: Record<string, unknown>;
  model_latency_seconds: number | null;
  total_tokens: number | null;
  total_cost: number | null;
  scorer_call_ids: Record<string, string>;
}

export interface EvalRowEvaluation {
  evaluation_call_id: string;
  trials: EvalTrial[];
}

export interface EvalRow {
  row_digest: string;
  raw_data_row: unknown;
  evaluations: EvalRowEvaluation[];
}

/**
 * The dataset row a predict_and_score call ran on, as a digest: the row digest named by a row ref
 * (`.../id/<digest>`), else the digest of the example itself (Weave's `extract_row_digest_from_example`).
 */
export function rowDigestOfExample(example: unknown): string {
  if (isWeaveRefString(example)) {
    try {
      const { extra } = parseWeaveRef(example);
      for (let i = extra.length - 2; i >= 0; i -= 2) if (extra[i] === "id") return extra[i + 1]!;
    } catch {
      // Not a well-formed ref: digest its text below.
    }
  }
  return typeof example === "string" ? bytesDigest(example) : bytesDigest(pythonJsonDumps(example ?? null, { sortKeys: true }));
}

/** The model's own call among a predict_and_score call's children: not a scorer, and given the model or named predict/invoke. */
function predictCallOf(children: CallSchema[], modelRef: unknown): CallSchema | undefined {
  return children.find((call) => {
    if (isMarkedScorerCall(call)) return false;
    if (modelRef !== undefined && call.inputs?.self === modelRef) return true;
    const name = opBaseName(call.op_name).toLowerCase();
    return name.includes("predict") || name.includes("invoke");
  });
}

/** The scorer name a scorer call reports under: its scorer ref's name, else its op name without `.score`. */
function scorerKeyOf(call: CallSchema): string {
  const scorer = weaveAttributes(call).scorer;
  return (typeof scorer === "string" ? refName(scorer) : undefined) ?? opBaseName(call.op_name).replace(/\.score$/, "");
}

function totalTokens(summary: Record<string, unknown> | undefined): number | null {
  const usage = summary?.usage;
  if (!isJsonObject(usage)) return null;
  let total: number | null = null;
  for (const entry of Object.values(usage)) {
    if (isJsonObject(entry) && typeof entry.total_tokens === "number") total = (total ?? 0) + entry.total_tokens;
  }
  return total;
}

function totalCost(summary: Record<string, unknown> | undefined): number | null {
  const costs = isJsonObject(summary?.weave) ? (summary.weave as Record<string, unknown>).costs : undefined;
  if (!isJsonObject(costs)) return null;
  let total: number | null = null;
  for (const entry of Object.values(costs)) {
    if (!isJsonObject(entry)) continue;
    for (const key of ["prompt_tokens_total_cost", "completion_tokens_total_cost"]) if (typeof entry[key] === "number") total = (total ?? 0) + (entry[key] as number);
  }
  return total;
}

/**
 * A trial from a predict_and_score call and its children: the output and scores it reported,
 * plus scores of scorer calls added after it ended, the model call's latency and token use.
 */
export function trialOf(pas: CallSchema, children: CallSchema[]): EvalTrial {
  const output = isJsonObject(pas.output) ? pas.output : {};
  const scores: Record<string, unknown> = { ...(isJsonObject(output.scores) ? output.scores : {}) };
  const scorerCalls = children.filter(isScorerCall);
  // Scores logged after the predict_and_score call ended (Weave's ScoreLogger) are not in its output.
  for (const call of scorerCalls) {
    if (pas.ended_at && call.started_at < pas.ended_at) continue;
    const key = scorerKeyOf(call);
    if (!(key in scores)) scores[key] = call.output ?? null;
  }
  const predict = predictCallOf(children, pas.inputs?.model);
  let latency: number | null = null;
  if (predict?.ended_at) latency = millisBetween(predict.started_at, predict.ended_at) / 1000;
  else if (isJsonObject(output.model_latency) && typeof output.model_latency.mean === "number") latency = output.model_latency.mean;
  else if (typeof output.model_latency === "number") latency = output.model_latency;
  const scorerCallIds: Record<string, string> = {};
  for (const key of Object.keys(scores)) {
    const lower = key.toLowerCase();
    const match =
      scorerCalls.find((call) => call.display_name === key) ??
      scorerCalls.find((call) => {
        const name = opBaseName(call.op_name).toLowerCase();
        return name.includes(lower) || lower.includes(name);
      });
    if (match) scorerCallIds[key] = match.id;
  }
  const usageSource = predict ?? pas;
  return {
    predict_and_score_call_id: pas.id,
    predict_call_id: predict?.id ?? null,
    model_output: "output" in output ? output.output : "model_output" in output ? output.model_output : null,
    scores,
    model_latency_seconds: latency,
    total_tokens: totalTokens(usageSource.summary),
    total_cost: totalCost(usageSource.summary),
    scorer_call_ids: scorerCallIds,
  };
}

/** Groups predict_and_score calls by dataset row, then by evaluation, in call order. */
export function groupRows(pasCalls: CallSchema[], childrenOf: Map<string, CallSchema[]>, includeRawDataRows: boolean): EvalRow[] {
  const rows = new Map<string, EvalRow & { byEvaluation: Map<string, EvalRowEvaluation> }>();
  for (const pas of pasCalls) {
    if (!pas.parent_id) continue;
    const example = pas.inputs?.example;
    const digest = rowDigestOfExample(example);
    let row = rows.get(digest);
    if (!row) {
      row = { row_digest: digest, raw_data_row: includeRawDataRows ? (example ?? null) : null, evaluations: [], byEvaluation: new Map() };
      rows.set(digest, row);
    }
    let evaluation = row.byEvaluation.get(pas.parent_id);
    if (!evaluation) {
      evaluation = { evaluation_call_id: pas.parent_id, trials: [] };
      row.byEvaluation.set(pas.parent_id, evaluation);
      row.evaluations.push(evaluation);
    }
    evaluation.trials.push(trialOf(pas, childrenOf.get(pas.id) ?? []));
  }
  return [...rows.values()].map(({ byEvaluation: _unused, ...row }) => row);
}
