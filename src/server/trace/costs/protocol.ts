import { z } from "zod";
import { zQuery } from "../common/query-schema.js";
import { EmptyRes, ProjectId, SortByList, Timestamp, TraceId } from "../common/schemas.js";

/** Per-project LLM token prices (`docs/api/trace.md#costs`): requests and answers. */

export const CostCreateReq = z.object({
  project_id: ProjectId,
  costs: z.record(
    TraceId.min(1),
    z.object({
      prompt_token_cost: z.number(),
      completion_token_cost: z.number(),
      cache_read_input_token_cost: z.number().nullish(),
      cache_creation_input_token_cost: z.number().nullish(),
      prompt_token_cost_unit: z.string().nullish(),
      completion_token_cost_unit: z.string().nullish(),
      effective_date: Timestamp.nullish(),
      provider_id: z.string().nullish(),
    }),
  ),
  wb_user_id: z.string().nullish(),
});

export const CostQueryReq = z.object({
  project_id: ProjectId,
  fields: z.array(z.string()).nullish(),
  query: zQuery.nullish(),
  sort_by: SortByList.nullish(),
  limit: z.int().min(0).nullish(),
  offset: z.int().min(0).nullish(),
});

export const CostPurgeReq = z.object({ project_id: ProjectId, query: zQuery });

/** `[llm_id, cost_id]` pairs, in the request's order. */
export const CostCreateRes = z.object({ ids: z.array(z.tuple([z.string(), z.string()])) });
export type CostCreateResponse = z.output<typeof CostCreateRes>;

/** A stored price; a query answers the `fields` it asked for (all of them by default). */
const CostRow = z
  .object({
    id: z.string(),
    llm_id: z.string(),
    prompt_token_cost: z.number(),
    completion_token_cost: z.number(),
    cache_read_input_token_cost: z.number(),
    cache_creation_input_token_cost: z.number(),
    prompt_token_cost_unit: z.string(),
    completion_token_cost_unit: z.string(),
    effective_date: z.string().describe("ISO 8601 with microseconds, UTC"),
    provider_id: z.string(),
    pricing_level: z.string(),
    pricing_level_id: z.string(),
    created_at: z.string(),
    created_by: z.string().nullable(),
  })
  .partial();

export const CostQueryRes = z.object({ results: z.array(CostRow) });
export type CostQueryResponse = z.output<typeof CostQueryRes>;

export const CostPurgeRes = EmptyRes;
