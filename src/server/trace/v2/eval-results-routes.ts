import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { queryEvalResults } from "../../../trace/evaluations/results.js";
import type { TraceServices } from "../../../trace/services.js";
import { defineRoute } from "../../routes.js";
import { EvalResultsRes } from "./protocol.js";
import { pathProject } from "../common/project.js";
import { zQuery } from "../common/query-schema.js";
import { StringList } from "../common/schemas.js";
import { traceRoute } from "../common/scope.js";
import { ProjectPath } from "./common.js";

const EvalResultsQueryBody = z.object({
  evaluation_call_ids: StringList.nullish(),
  evaluation_run_ids: StringList.nullish(),
  require_intersection: z.boolean().default(false),
  include_raw_data_rows: z.boolean().default(false),
  resolve_row_refs: z.boolean().default(false),
  include_rows: z.boolean().default(true),
  include_summary: z.boolean().default(false),
  summary_require_intersection: z.boolean().nullish(),
  include_predict_and_score_children: z.boolean().default(true),
  include_costs: z.boolean().default(false),
  sort_by: z.array(z.object({ field: z.string(), direction: z.enum(["asc", "desc"]).default("asc"), evaluation_call_id: z.string().nullish(), mode: z.enum(["value", "difference"]).default("value") })).nullish(),
  filters: z.array(z.object({ evaluation_call_id: z.string().nullish(), query: zQuery })).nullish(),
  filter_logic_operator: z.enum(["and", "or"]).default("or"),
  limit: z.number().int().min(0).nullish(),
  offset: z.number().int().min(0).default(0),
});

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
