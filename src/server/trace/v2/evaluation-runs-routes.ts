import type { FastifyInstance } from "fastify";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import type { TraceServices } from "../../../trace/services.js";
import { defineRoute } from "../../routes.js";
import { sendJsonLines } from "../common/json-lines.js";
import { pathProject, traceUserId } from "../common/project.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { listParam, pageOf, ProjectPath } from "./common.js";
import { DeleteRes, EvaluationRunCreateRes, EvaluationRunRes, RunCreateBody, RunDeleteQuery, RunFinishBody, RunListQuery, RunPath, SuccessRes } from "./protocol.js";

/**
 * /v2/{entity}/{project}/evaluation_runs (`docs/api/trace.md#v2-objects`): evaluation runs stored as
 * `Evaluation.evaluate` calls, which the calls API, the SDKs and eval_results read like any run.
 */
export async function v2EvaluationRunRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  useLosslessJson(app);
  const { runs } = options.trace;
  const common = traceRoute("v2 evaluation runs");

  defineRoute(
    app,
    { method: "POST", url: "/v2/:entity/:project/evaluation_runs", summary: "Start an evaluation run", params: ProjectPath, body: RunCreateBody, response: EvaluationRunCreateRes, ...common },
    async ({ params, body }, request) => ({
      evaluation_run_id: await runs.create(pathProject(request, params), { evaluation: body.evaluation, model: body.model, sourceEvaluationRunId: body.source_evaluation_run_id }, traceUserId(request)),
    }),
  );

  defineRoute(app, { method: "GET", url: "/v2/:entity/:project/evaluation_runs/:evaluation_run_id", summary: "Read an evaluation run", params: RunPath, response: EvaluationRunRes, ...common }, async ({ params }, request) =>
    runs.read(pathProject(request, params), params.evaluation_run_id),
  );

  defineRoute(
    app,
    { method: "GET", url: "/v2/:entity/:project/evaluation_runs", summary: "List evaluation runs as JSON Lines", params: ProjectPath, query: RunListQuery, stream: EvaluationRunRes, streamFormat: "jsonl", ...common },
    async ({ params, query }, request, reply) => {
      const filter = {
        evaluations: eitherList(listParam(query.evaluations), listParam(query.evaluation_refs)),
        models: eitherList(listParam(query.models), listParam(query.model_refs)),
        runIds: listParam(query.evaluation_run_ids),
      };
      return sendJsonLines(request, reply, await runs.list(pathProject(request, params), filter, pageOf(query)), stringifyJsonLossless);
    },
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/v2/:entity/:project/evaluation_runs", summary: "Delete evaluation runs with their calls", params: ProjectPath, query: RunDeleteQuery, response: DeleteRes, ...common },
    async ({ params, query }, request) => ({
      num_deleted: await runs.delete(pathProject(request, params), listParam(query.evaluation_run_ids) ?? []),
    }),
  );

  defineRoute(
    app,
    { method: "POST", url: "/v2/:entity/:project/evaluation_runs/:evaluation_run_id/finish", summary: "Finish an evaluation run with its score means", params: RunPath, body: RunFinishBody, response: SuccessRes, ...common },
    async ({ params, body }, request) => {
      await runs.finish(pathProject(request, params), params.evaluation_run_id, body?.summary, traceUserId(request));
      return { success: true };
    },
  );
}

/** Both spellings of one filter: their union, or undefined (no filter) when neither is given. */
function eitherList(first: string[] | undefined, second: string[] | undefined): string[] | undefined {
  if (first === undefined) return second;
  if (second === undefined) return first;
  return [...first, ...second];
}
