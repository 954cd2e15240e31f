import type { CallSchema } from "../../store/trace/calls/types.js";
import { TraceBadRequest, TraceNotFound } from "../../store/trace/errors.js";
import { feedbackRow } from "../../store/trace/feedback.js";
import { uuidv7 } from "../../store/trace/ids.js";
import { isJsonObject } from "../../store/trace/object-class.js";
import { PLACEHOLDER_MODEL_PREDICT_OP_SOURCE, PLACEHOLDER_PREDICT_AND_SCORE_OP_SOURCE, PLACEHOLDER_SCORER_SCORE_OP_SOURCE } from "../object-layouts.js";
import type { Operand } from "../../store/trace/query/ast.js";
import { parseWeaveRef, refName, type WeaveRef } from "../../store/trace/refs.js";
import { millisBetween, nowTimestamp } from "../../store/trace/timestamps.js";
import type { TraceCallStore } from "../../store/trace/trace-store.js";
import type { V2ObjectResources } from "../v2-resources.js";
import { callEnd, callStart, publishedOpRef, readCall, readCalls } from "./call-writes.js";
import { isPredictAndScore, PREDICT_AND_SCORE_OP, PREDICTION_MARK, SCORE_MARK, WEAVE_ATTRIBUTES, weaveAttributes } from "./constants.js";
import { literal, MarkedCalls, type Page, requireRef, weaveField } from "./runs.js";

export interface PredictionView {
  prediction_id: string;
  model: string;
  inputs: Record<string, unknown>;
  output: unknown;
  evaluation_run_id: string | null;
  wb_user_id: string | null;
}

export interface ScoreView {
  score_id: string;
  scorer: string;
  value: unknown;
  evaluation_run_id: string | null;
  wb_user_id: string | null;
}

/** A prediction call's inputs as given: `{self: model, inputs: {...}}` holds them under `inputs`. */
function predictionInputs(call: CallSchema): Record<string, unknown> {
  const inputs = call.inputs?.inputs;
  return isJsonObject(inputs) ? inputs : {};
}

/**
 * Predictions and scores of the v2 API (`docs/api/trace.md#v2-objects`), stored as calls as Weave stores
 * them. A prediction in a run gets an `Evaluation.predict_and_score` parent under the run; its
 * call is `<model>.predict`, ended at once with the output. A score is a `<scorer>.score` call
 * beside the prediction plus `wandb.runnable.<scorer>` feedback on the prediction call.
 */
export class PredictionsAndScores {
  private readonly predictions: MarkedCalls;
  private readonly scores: MarkedCalls;

  constructor(
    private readonly calls: TraceCallStore,
    private readonly v2: V2ObjectResources,
  ) {
    this.predictions = new MarkedCalls(calls, PREDICTION_MARK, "Prediction");
    this.scores = new MarkedCalls(calls, SCORE_MARK, "Score");
  }

  async createPrediction(projectId: string, input: { model: string; inputs: Record<string, unknown>; output: unknown; evaluationRunId?: string | null; genaiSpanRef?: unknown }, wbUserId: string): Promise<string> {
    requireRef(input.model, "model");
    const predictionId = uuidv7();
    let traceId = predictionId;
    let parentId: string | null = null;
    const starts = [];
    if (input.evaluationRunId) {
      const run = await readCall(this.calls, projectId, input.evaluationRunId);
      if (!run) throw new TraceNotFound(`Evaluation run ${input.evaluationRunId} not found`);
      const opName = await publishedOpRef(this.v2, projectId, PREDICT_AND_SCORE_OP, PLACEHOLDER_PREDICT_AND_SCORE_OP_SOURCE, wbUserId);
      const pas = callStart({
        projectId,
        traceId: run.trace_id,
        parentId: run.id,
        opName,
        inputs: { self: run.inputs?.self ?? null, model: input.model, example: input.inputs },
        attributes: { [WEAVE_ATTRIBUTES]: { predict_call_id: predictionId } },
        wbUserId,
      });
      starts.push({ start: pas });
      traceId = run.trace_id;
      parentId = pas.id;
    }
    const opName = await publishedOpRef(this.v2, projectId, `${refName(input.model) ?? "Model"}.predict`, PLACEHOLDER_MODEL_PREDICT_OP_SOURCE, wbUserId);
    const marks: Record<string, unknown> = { [PREDICTION_MARK]: "true", model: input.model };
    if (input.evaluationRunId) marks.evaluation_run_id = input.evaluationRunId;
    if (input.genaiSpanRef !== undefined && input.genaiSpanRef !== null) marks.genai_span_ref = input.genaiSpanRef;
    const prediction = callStart({ projectId, id: predictionId, traceId, parentId, opName, inputs: { self: input.model, inputs: input.inputs }, attributes: { [WEAVE_ATTRIBUTES]: marks }, wbUserId });
    await this.calls.writeCalls([...starts, { start: prediction, end: callEnd(projectId, predictionId, { output: input.output }) }]);
    return predictionId;
  }

  async readPrediction(projectId: string, id: string): Promise<PredictionView> {
    return this.predictionView(projectId, await this.predictions.read(projectId, id));
  }

  async listPredictions(projectId: string, evaluationRunId: string | undefined, page: Page): Promise<PredictionView[]> {
    const conditions: Operand[] = evaluationRunId ? [{ $eq: [weaveField("evaluation_run_id"), literal(evaluationRunId)] }] : [];
    const calls = await this.predictions.list(projectId, conditions, page);
    return Promise.all(calls.map((call) => this.predictionView(projectId, call)));
  }

  deletePredictions(projectId: string, ids: string[]): Promise<number> {
    return this.predictions.delete(projectId, ids);
  }

  /**
   * Ends a prediction (again: its output stays) and, when it belongs to a run, ends its
   * predict_and_score parent with the output, the scores of its sibling score calls by scorer
   * name, and the model latency.
   */
  async finishPrediction(projectId: string, id: string): Promise<void> {
    const prediction = await this.predictions.read(projectId, id);
    await this.calls.writeCalls([{ end: callEnd(projectId, id, { output: prediction.output }) }]);
    const parent = prediction.parent_id ? await readCall(this.calls, projectId, prediction.parent_id) : undefined;
    if (!parent || !isPredictAndScore(parent.op_name)) return;
    const siblings = await readCalls(this.calls, {
      projectId,
      filter: { parent_ids: [parent.id] },
      query: { $eq: [weaveField(SCORE_MARK), literal("true")] },
      columns: ["output", "attributes"],
    });
    const scores: Record<string, unknown> = {};
    for (const score of siblings) {
      if (score.output === null || score.output === undefined) continue;
      const scorer = weaveAttributes(score).scorer;
      scores[(typeof scorer === "string" ? refName(scorer) : undefined) ?? "unknown"] = score.output;
    }
    const latency = prediction.ended_at ? { mean: millisBetween(prediction.started_at, prediction.ended_at) / 1000 } : null;
    await this.calls.writeCalls([{ end: callEnd(projectId, parent.id, { output: { output: prediction.output, scores, model_latency: latency } }) }]);
  }

  async createScore(projectId: string, input: { predictionId: string; scorer: string; value: unknown; evaluationRunId?: string | null }, wbUserId: string): Promise<string> {
    let scorerRef: WeaveRef | undefined;
    try {
      scorerRef = parseWeaveRef(input.scorer);
    } catch {
      scorerRef = undefined;
    }
    if (scorerRef?.kind !== "object") throw new TraceBadRequest(`Invalid scorer ref: ${input.scorer}: a score's scorer must be an object ref`);
    const prediction = await readCall(this.calls, projectId, input.predictionId);
    if (!prediction) throw new TraceNotFound(`Prediction ${input.predictionId} not found`);
    const traceId = input.evaluationRunId ? input.evaluationRunId : undefined;
    const parentId = input.evaluationRunId ? (prediction.parent_id ?? input.evaluationRunId) : null;
    const opName = await publishedOpRef(this.v2, projectId, `${scorerRef.name}.score`, PLACEHOLDER_SCORER_SCORE_OP_SOURCE, wbUserId);
    const marks: Record<string, unknown> = { [SCORE_MARK]: "true", prediction_id: prediction.id, scorer: input.scorer };
    if (input.evaluationRunId) marks.evaluation_run_id = input.evaluationRunId;
    const score = callStart({
      projectId,
      traceId,
      parentId,
      opName,
      inputs: { self: input.scorer, inputs: predictionInputs(prediction), output: prediction.output ?? null },
      attributes: { [WEAVE_ATTRIBUTES]: marks },
      wbUserId,
    });
    await this.calls.writeCalls([{ start: score, end: callEnd(projectId, score.id, { output: input.value }) }]);
    await this.calls.insertFeedback([
      feedbackRow({
        id: uuidv7(),
        project_id: projectId,
        weave_ref: `weave:///${projectId}/call/${prediction.id}`,
        feedback_type: `wandb.runnable.${scorerRef.name}`,
        payload: { output: input.value },
        runnable_ref: input.scorer,
        wb_user_id: wbUserId,
        created_at: nowTimestamp(),
      }),
    ]);
    return score.id;
  }

  async readScore(projectId: string, id: string): Promise<ScoreView> {
    return scoreView(await this.scores.read(projectId, id));
  }

  async listScores(projectId: string, evaluationRunId: string | undefined, page: Page): Promise<ScoreView[]> {
    const conditions: Operand[] = evaluationRunId ? [{ $eq: [weaveField("evaluation_run_id"), literal(evaluationRunId)] }] : [];
    return (await this.scores.list(projectId, conditions, page)).map(scoreView);
  }

  deleteScores(projectId: string, ids: string[]): Promise<number> {
    return this.scores.delete(projectId, ids);
  }

  /** The run of a prediction: its own mark, else the parent of its predict_and_score parent. */
  private async predictionView(projectId: string, call: CallSchema): Promise<PredictionView> {
    const marks = weaveAttributes(call);
    let runId = typeof marks.evaluation_run_id === "string" ? marks.evaluation_run_id : null;
    if (!runId && call.parent_id) {
      const parent = await readCall(this.calls, projectId, call.parent_id);
      if (parent && isPredictAndScore(parent.op_name)) runId = parent.parent_id ?? null;
    }
    return {
      prediction_id: call.id,
      model: typeof marks.model === "string" ? marks.model : "",
      inputs: predictionInputs(call),
      output: call.output ?? null,
      evaluation_run_id: runId,
      wb_user_id: call.wb_user_id ?? null,
    };
  }
}

function scoreView(call: CallSchema): ScoreView {
  const marks = weaveAttributes(call);
  return {
    score_id: call.id,
    scorer: typeof marks.scorer === "string" ? marks.scorer : "",
    value: call.output ?? 0.0,
    evaluation_run_id: typeof marks.evaluation_run_id === "string" ? marks.evaluation_run_id : null,
    wb_user_id: call.wb_user_id ?? null,
  };
}
