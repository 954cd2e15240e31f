import type { CallSchema } from "../../store/trace/calls/types.js";
import { isJsonObject } from "../../store/trace/object-class.js";
import { refName } from "../../store/trace/refs.js";

/**
 * Names Weave uses for evaluation calls (`weave/trace_server/constants.py`): the op names of the
 * evaluation call tree and the keys under `attributes.weave` that mark v2 runs, predictions and
 * scores.
 */
export const EVALUATE_OP = "Evaluation.evaluate";
export const PREDICT_AND_SCORE_OP = "Evaluation.predict_and_score";
/** The TypeScript SDK's Evaluation class names the op after its camelCase method. */
export const PREDICT_AND_SCORE_OP_TS = "Evaluation.predictAndScore";
export const SUMMARIZE_OP = "Evaluation.summarize";

export const WEAVE_ATTRIBUTES = "weave";
export const RUN_MARK = "evaluation_run";
export const PREDICTION_MARK = "prediction";
export const SCORE_MARK = "score";
/** Marker the SDKs put on evaluation calls (`_weave_eval_meta`), e.g. `{score: true}` on scorer calls. */
export const EVAL_META = "_weave_eval_meta";

/** The name an op call runs: the name in an op ref (`weave:///e/p/op/<name>:<digest>`), or the plain op name. */
export function opBaseName(opName: string): string {
  return refName(opName) ?? opName;
}

export function isPredictAndScore(opName: string): boolean {
  const name = opBaseName(opName);
  return name === PREDICT_AND_SCORE_OP || name === PREDICT_AND_SCORE_OP_TS;
}

/** The `attributes.weave` object of a call ({} when absent). */
export function weaveAttributes(call: Pick<CallSchema, "attributes">): Record<string, unknown> {
  const value = call.attributes?.[WEAVE_ATTRIBUTES];
  return isJsonObject(value) ? value : {};
}

/** Whether a call is marked as a scorer call, by the v2 API or by the SDKs. */
export function isMarkedScorerCall(call: Pick<CallSchema, "attributes">): boolean {
  if (weaveAttributes(call)[SCORE_MARK] === "true") return true;
  const meta = call.attributes?.[EVAL_META];
  return isJsonObject(meta) && Boolean(meta.score);
}

/** Whether a call is a scorer call: marked as one, or named like one. */
export function isScorerCall(call: Pick<CallSchema, "attributes" | "op_name">): boolean {
  if (isMarkedScorerCall(call)) return true;
  const name = opBaseName(call.op_name).toLowerCase();
  return name.includes(".score") || name.includes("scorer");
}
