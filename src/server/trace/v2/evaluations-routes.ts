import type { FastifyInstance } from "fastify";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import type { V2ObjectResources } from "../../../trace/v2-resources.js";
import { defineRoute } from "../../routes.js";
import { sendJsonLines } from "../common/json-lines.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { pathProject, traceUserId } from "../common/project.js";
import { createdFields, DeleteQuery, digestsOf, headerFields, ListQuery, ObjectPath, pageOf, ProjectPath, VersionPath } from "./common.js";
import { DeleteRes, EvaluationCreateBody, EvaluationCreateRes, EvaluationRes } from "./protocol.js";

/**
 * /v2/{entity}/{project}/evaluations: an Evaluation object with its placeholder ops
 * (`docs/api/trace.md#v2-objects`).
 */
export async function v2EvaluationRoutes(app: FastifyInstance, options: { v2: V2ObjectResources }): Promise<void> {
  useLosslessJson(app);
  const { v2 } = options;
  const common = traceRoute("v2 evaluations");
  const view = (evaluation: Awaited<ReturnType<V2ObjectResources["readEvaluation"]>>) => ({
    ...headerFields(evaluation),
    name: evaluation.name,
    description: evaluation.description,
    dataset: evaluation.dataset,
    scorers: evaluation.scorers,
    trials: evaluation.trials,
    evaluation_name: evaluation.evaluationName,
    evaluate_op: evaluation.evaluateOp,
    predict_and_score_op: evaluation.predictAndScoreOp,
    summarize_op: evaluation.summarizeOp,
  });

  defineRoute(
    app,
    { method: "POST", url: "/v2/:entity/:project/evaluations", summary: "Create an evaluation version", params: ProjectPath, body: EvaluationCreateBody, response: EvaluationCreateRes, ...common },
    async ({ params, body }, request) => {
      const created = await v2.createEvaluation(
        pathProject(request, params),
        {
          name: body.name,
          description: body.description,
          dataset: body.dataset,
          scorers: body.scorers,
          trials: body.trials,
          evaluationName: body.evaluation_name,
          evalAttributes: body.eval_attributes,
        },
        traceUserId(request),
      );
      return { ...createdFields(created), evaluation_ref: created.evaluationRef };
    },
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/evaluations/:object_id/versions/:digest", summary: "Read an evaluation version", params: VersionPath, response: EvaluationRes, ...common },
    async ({ params }, request) => view(await v2.readEvaluation(pathProject(request, params), params.object_id, params.digest)),
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/evaluations", summary: "List evaluation versions as JSON Lines", params: ProjectPath, query: ListQuery, stream: EvaluationRes, streamFormat: "jsonl", ...common },
    async ({ params, query }, request, reply) => {
      const evaluations = await v2.listEvaluations(pathProject(request, params), pageOf(query));
      return sendJsonLines(request, reply, evaluations.map(view), stringifyJsonLossless);
    },
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/v2/:entity/:project/evaluations/:object_id", summary: "Delete evaluation versions", params: ObjectPath, query: DeleteQuery, response: DeleteRes, ...common },
    async ({ params, query }, request) => ({
      num_deleted: await v2.delete(pathProject(request, params), params.object_id, digestsOf(query)),
    }),
  );
}
