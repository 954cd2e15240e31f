import type { FastifyInstance } from "fastify";
import { nowTimestamp } from "../../../store/trace/timestamps.js";
import { defineRoute } from "../../routes.js";
import { CostCreateReq, CostCreateRes, type CostCreateResponse, CostPurgeReq, CostPurgeRes, CostQueryReq, CostQueryRes, type CostQueryResponse } from "./protocol.js";
import { resolveProject, traceUserId } from "../common/project.js";
import { traceRoute } from "../common/scope.js";
import type { TraceServices } from "../../../trace/services.js";
import { purgeIds } from "../common/purge-query.js";

/** Per-project LLM token prices (`docs/api/trace.md#costs`), used by `include_costs`. */
export async function costRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  const store = options.trace.calls;
  const common = traceRoute("costs");

  defineRoute(app, { method: "POST", url: "/cost/create", summary: "Add LLM prices", body: CostCreateReq, response: CostCreateRes, ...common }, async ({ body }, request): Promise<CostCreateResponse> => {
    resolveProject(request, body.project_id);
    const now = nowTimestamp();
    const costs = Object.fromEntries(
      Object.entries(body.costs).map(([llmId, cost]) => [
        llmId,
        {
          prompt_token_cost: cost.prompt_token_cost,
          completion_token_cost: cost.completion_token_cost,
          cache_read_input_token_cost: cost.cache_read_input_token_cost ?? 0,
          cache_creation_input_token_cost: cost.cache_creation_input_token_cost ?? 0,
          prompt_token_cost_unit: cost.prompt_token_cost_unit ?? "USD",
          completion_token_cost_unit: cost.completion_token_cost_unit ?? "USD",
          effective_date: cost.effective_date ?? now,
          provider_id: cost.provider_id ?? "default",
        },
      ]),
    );
    return { ids: await store.createCosts(body.project_id, costs, traceUserId(request)) };
  });

  defineRoute(app, { method: "POST", url: "/cost/query", summary: "Query LLM prices", body: CostQueryReq, response: CostQueryRes, ...common }, async ({ body }, request): Promise<CostQueryResponse> => {
    resolveProject(request, body.project_id);
    const rows = await store.queryCosts({ projectId: body.project_id, fields: body.fields, query: body.query?.$expr, sortBy: body.sort_by, limit: body.limit, offset: body.offset });
    // The store answers the asked-for columns of trace_costs, each only from the known field list (an unknown one is a 400).
    return { results: rows as CostQueryResponse["results"] };
  });

  defineRoute(app, { method: "POST", url: "/cost/purge", summary: "Delete LLM prices by id", body: CostPurgeReq, response: CostPurgeRes, ...common }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    await store.purgeCosts(body.project_id, purgeIds(body.query.$expr, "Can only purge costs by specifying one or more cost ids", true));
    return {};
  });
}
