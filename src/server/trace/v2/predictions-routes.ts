import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import type { TraceServices } from "../../../trace/services.js";
import { defineRoute } from "../../routes.js";
import { sendJsonLines } from "../common/json-lines.js";
import { pathProject, traceUserId } from "../common/project.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { ListParam, listParam, pageOf, ProjectPath } from "./common.js";
import { DeleteRes, PredictionCreateBody, PredictionCreateRes, PredictionPath, PredictionRes, PredictionListQuery, ScoreCreateBody, ScoreCreateRes, ScorePath, ScoreRes, SuccessRes } from "./protocol.js";

/**
 * /v2/{entity}/{project}/predictions and /scores (`docs/api/trace.md#v2-objects`): predictions are model
 * calls (under a predict_and_score call when they belong to a run), scores are scorer calls beside
 * them plus runnable feedback on the prediction.
 */
export async function v2PredictionRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  useLosslessJson(app);
  const { predictions } = options.trace;
  const common = traceRoute("v2 predictions and scores");

  defineRoute(
    app,
    { method: "POST", url: "/v2/:entity/:project/predictions", summary: "Record a prediction", params: ProjectPath, body: PredictionCreateBody, response: PredictionCreateRes, ...common },
    async ({ params, body }, request) => ({
      prediction_id: await predictions.createPrediction(
        pathProject(request, params),
        { model: body.model, inputs: body.inputs, output: body.output ?? null, evaluationRunId: body.evaluation_run_id, genaiSpanRef: body.genai_span_ref },
        traceUserId(request),
      ),
    }),
  );

  defineRoute(app, { method: "GET", url: "/v2/:entity/:project/predictions/:prediction_id", summary: "Read a prediction", params: PredictionPath, response: PredictionRes, ...common }, async ({ params }, request) =>
    predictions.readPrediction(pathProject(request, params), params.prediction_id),
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/predictions", summary: "List predictions as JSON Lines", params: ProjectPath, query: PredictionListQuery, stream: PredictionRes, streamFormat: "jsonl", ...common },
    async ({ params, query }, request, reply) => sendJsonLines(request, reply, await predictions.listPredictions(pathProject(request, params), query.evaluation_run_id, pageOf(query)), stringifyJsonLossless),
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/v2/:entity/:project/predictions", summary: "Delete predictions", params: ProjectPath, query: z.object({ prediction_ids: ListParam }), response: DeleteRes, ...common },
    async ({ params, query }, request) => ({
      num_deleted: await predictions.deletePredictions(pathProject(request, params), listParam(query.prediction_ids) ?? []),
    }),
  );

  defineRoute(
    app,
    { method: "POST", url: "/v2/:entity/:project/predictions/:prediction_id/finish", summary: "Finish a prediction and its predict_and_score call", params: PredictionPath, response: SuccessRes, ...common },
    async ({ params }, request) => {
      await predictions.finishPrediction(pathProject(request, params), params.prediction_id);
      return { success: true };
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/v2/:entity/:project/scores", summary: "Record a score of a prediction", params: ProjectPath, body: ScoreCreateBody, response: ScoreCreateRes, ...common },
    async ({ params, body }, request) => ({
      score_id: await predictions.createScore(pathProject(request, params), { predictionId: body.prediction_id, scorer: body.scorer, value: body.value, evaluationRunId: body.evaluation_run_id }, traceUserId(request)),
    }),
  );

  defineRoute(app, { method: "GET", url: "/v2/:entity/:project/scores/:score_id", summary: "Read a score", params: ScorePath, response: ScoreRes, ...common }, async ({ params }, request) =>
    predictions.readScore(pathProject(request, params), params.score_id),
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/scores", summary: "List scores as JSON Lines", params: ProjectPath, query: PredictionListQuery, stream: ScoreRes, streamFormat: "jsonl", ...common },
    async ({ params, query }, request, reply) => sendJsonLines(request, reply, await predictions.listScores(pathProject(request, params), query.evaluation_run_id, pageOf(query)), stringifyJsonLossless),
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/v2/:entity/:project/scores", summary: "Delete scores", params: ProjectPath, query: z.object({ score_ids: ListParam }), response: DeleteRes, ...common },
    async ({ params, query }, request) => ({
      num_deleted: await predictions.deleteScores(pathProject(request, params), listParam(query.score_ids) ?? []),
    }),
  );
}
