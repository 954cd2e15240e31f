import type { FastifyInstance } from "fastify";
import { queryEvalResults } from "../../../trace/evaluations/results.js";
import type { TraceServices } from "../../../trace/services.js";
import { defineRoute } from "../../routes.js";
import { EvalResultsQueryBody, EvalResultsRes } from "./protocol.js";
import { pathProject } from "../common/project.js";
import { traceRoute } from "../common/scope.js";
import { ProjectPath } from "./common.js";

/**
 * POST /v2/{entity}/{project}/eval_results/query (`docs/api/trace.md#v2-objects`): evaluation results grouped
 * by dataset row.
 */
export async function v2EvalResultsRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  const { calls, refs } = options.trace;
  defineRoute(
    app,
    { method: "POST", url: "/v2/:entity/:project/eval_results/query", summary: "Evaluation results by dataset row", params: ProjectPath, body: EvalResultsQueryBody, response: EvalResultsRes, ...traceRoute("v2 eval results") },
    async ({ params, body }, request) =>
      queryEvalResults(calls, refs, {
        projectId: pathProject(request, params),
        evaluationCallIds: [...(body.evaluation_call_ids ?? []), ...(body.evaluation_run_ids ?? [])],
        requireIntersection: body.require_intersection,
        includeRawDataRows: body.include_raw_data_rows,
        resolveRowRefs: body.resolve_row_refs,
        includeRows: body.include_rows,
        includeSummary: body.include_summary,
        summaryRequireIntersection: body.summary_require_intersection ?? null,
        includePredictAndScoreChildren: body.include_predict_and_score_children,
        includeCosts: body.include_costs,
        sortBy: body.sort_by ?? [],
        filters: (body.filters ?? []).map((filter) => ({ evaluation_call_id: filter.evaluation_call_id, query: filter.query.$expr })),
        filterLogicOperator: body.filter_logic_operator,
        limit: body.limit ?? null,
        offset: body.offset,
      }),
  );
}
