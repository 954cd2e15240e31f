import { z } from "zod";
import { EmptyRes, IdList, JsonObject, ProjectId, SortByList, Timestamp, TraceId } from "../common/schemas.js";
import { zQuery } from "../common/query-schema.js";

/**
 * Request bodies of the calls endpoints (`docs/api/trace.md#call-schemas`, `docs/api/trace.md#calls`).
 * Unknown fields are ignored (the Node SDK sends extra ones); `wb_user_id` is accepted and replaced by the
 * server.
 */
export const StartedCallSchemaForInsert = z.object({
  project_id: ProjectId,
  id: TraceId.min(1).nullish(),
  op_name: TraceId.min(1),
  display_name: z.string().nullish(),
  trace_id: TraceId.min(1).nullish(),
  parent_id: TraceId.nullish(),
  thread_id: TraceId.nullish(),
  turn_id: TraceId.nullish(),
  started_at: Timestamp,
  attributes: JsonObject,
  inputs: JsonObject,
  otel_dump: JsonObject.nullish(),
  wb_user_id: z.string().nullish(),
  wb_run_id: z.string().nullish(),
  wb_run_step: z.int().nullish(),
});

export const EndedCallSchemaForInsert = z.object({
  project_id: ProjectId,
  id: TraceId.min(1),
  trace_id: TraceId.nullish(),
  ended_at: Timestamp,
  exception: z.string().nullish(),
  output: z.unknown().optional(),
  summary: JsonObject,
  wb_run_step_end: z.int().nullish(),
});

export const CompletedCallSchemaForInsert = StartedCallSchemaForInsert.extend({
  id: z.string().min(1),
  trace_id: z.string().min(1),
  ended_at: Timestamp,
  exception: z.string().nullish(),
  output: z.unknown().optional(),
  summary: JsonObject,
  wb_run_step_end: z.int().nullish(),
});

export type StartedCall = z.output<typeof StartedCallSchemaForInsert>;
export type EndedCall = z.output<typeof EndedCallSchemaForInsert>;

export const CallStartReq = z.object({ start: StartedCallSchemaForInsert });
export const CallEndReq = z.object({ end: EndedCallSchemaForInsert });

/** Items are checked one by one after their mode, so an unknown mode is a 400 as in Weave. */
export const CallCreateBatchReq = z.object({
  batch: z.array(z.object({ mode: z.string(), req: z.unknown() })),
});

export const CallsCompleteReq = z.object({ batch: z.array(CompletedCallSchemaForInsert) });

export const CallReadReq = z.object({
  project_id: ProjectId,
  id: z.string(),
  include_costs: z.boolean().nullish(),
  include_storage_size: z.boolean().nullish(),
  include_total_storage_size: z.boolean().nullish(),
});

export const CallUpdateReq = z.object({
  project_id: ProjectId,
  call_id: z.string(),
  display_name: z.string().nullish(),
  wb_user_id: z.string().nullish(),
});

export const CallsDeleteReq = z.object({
  project_id: ProjectId,
  call_ids: z.array(z.string()),
  wb_user_id: z.string().nullish(),
});

export const CallsFilter = z.object({
  op_names: IdList,
  input_refs: IdList,
  output_refs: IdList,
  parent_ids: IdList,
  trace_ids: IdList,
  call_ids: IdList,
  thread_ids: IdList,
  turn_ids: IdList,
  trace_roots_only: z.boolean().nullish(),
  wb_user_ids: IdList,
  wb_run_ids: IdList,
});

export const CallsQueryReq = z.object({
  project_id: ProjectId,
  filter: CallsFilter.nullish(),
  limit: z.int().min(0).nullish(),
  offset: z.int().min(0).nullish(),
  sort_by: SortByList.nullish(),
  query: zQuery.nullish(),
  include_costs: z.boolean().nullish(),
  include_feedback: z.boolean().nullish(),
  include_storage_size: z.boolean().nullish(),
  include_total_storage_size: z.boolean().nullish(),
  include_usernames: z.boolean().nullish(),
  columns: z.array(z.string()).nullish(),
  expand_columns: z.array(z.string()).nullish(),
  return_expanded_column_values: z.boolean().nullish(),
});
export type CallsQueryBody = z.output<typeof CallsQueryReq>;

export const CallsQueryStatsReq = z.object({
  project_id: ProjectId,
  filter: CallsFilter.nullish(),
  query: zQuery.nullish(),
  limit: z.int().nullish(),
  include_total_storage_size: z.boolean().nullish(),
  expand_columns: z.array(z.string()).nullish(),
});

export const CallsUsageReq = z.object({
  project_id: ProjectId,
  call_ids: z.array(z.string()),
  include_costs: z.boolean().nullish(),
  limit: z.int().nullish(),
});

export const TraceUsageReq = z.object({
  project_id: ProjectId,
  filter: CallsFilter.nullish(),
  query: zQuery.nullish(),
  include_costs: z.boolean().nullish(),
  limit: z.int().nullish(),
});

const Aggregation = z.enum(["sum", "avg", "min", "max", "count", "count_true", "count_false"]);
const Percentiles = z.array(z.number().min(0).max(100));

export const CallStatsReq = z.object({
  project_id: ProjectId,
  start: Timestamp,
  end: Timestamp.nullish(),
  granularity: z.int().min(1).nullish(),
  usage_metrics: z
    .array(
      z.object({
        metric: z.enum(["input_tokens", "output_tokens", "total_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "input_cost", "output_cost", "total_cost"]),
        aggregations: z.array(Aggregation).nullish(),
        percentiles: Percentiles.nullish(),
      }),
    )
    .nullish(),
  call_metrics: z
    .array(
      z.object({
        metric: z.enum(["latency_ms", "call_count", "error_count"]),
        aggregations: z.array(Aggregation).nullish(),
        percentiles: Percentiles.nullish(),
      }),
    )
    .nullish(),
  filter: CallsFilter.nullish(),
  timezone: z.string().nullish(),
});

export const ThreadsQueryReq = z.object({
  project_id: ProjectId,
  filter: z
    .object({
      after_datetime: Timestamp.nullish(),
      before_datetime: Timestamp.nullish(),
      thread_ids: z.array(z.string()).nullish(),
    })
    .nullish(),
  limit: z.int().min(0).nullish(),
  offset: z.int().min(0).nullish(),
  sort_by: SortByList.nullish(),
});

/* Answers (`docs/api/trace.md#calls`). */

export const CallStartRes = z.object({ id: z.string(), trace_id: z.string() });
export type CallStartResponse = z.output<typeof CallStartRes>;

/** One entry per batch item, in order: `{id, trace_id}` for a start, `{}` for an end. */
export const CallUpsertBatchRes = z.object({ res: z.array(z.union([CallStartRes, EmptyRes])) });
export type CallUpsertBatchResponse = z.output<typeof CallUpsertBatchRes>;

export const CallsDeleteRes = z.object({ num_deleted: z.int().min(0) });

/** A call's summary as read: what was stored plus the derived `weave` part (status, latency, costs, feedback). */
const CallSummary = z.looseObject({
  weave: z
    .looseObject({
      status: z.enum(["success", "error", "running", "descendant_error"]).optional(),
      trace_name: z.string().optional(),
      latency_ms: z.number().optional(),
      display_name: z.string().optional(),
      costs: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
      feedback: z.array(z.record(z.string(), z.unknown())).optional(),
    })
    .optional(),
});

const NullableString = z.string().nullable().optional();
const NullableInt = z.number().nullable().optional();

/**
 * A call as read (`CallSchema`). With `columns` only the asked-for columns are present besides the
 * five that always are; `inputs`, `output` and `attributes` are the caller's free-form JSON.
 */
export const CallSchemaRes = z.object({
  id: z.string(),
  project_id: z.string(),
  op_name: z.string(),
  trace_id: z.string(),
  started_at: z.string(),
  display_name: NullableString,
  parent_id: NullableString,
  thread_id: NullableString,
  turn_id: NullableString,
  attributes: z.record(z.string(), z.unknown()).optional(),
  inputs: z.record(z.string(), z.unknown()).optional(),
  ended_at: NullableString,
  exception: NullableString,
  output: z.unknown().optional(),
  summary: CallSummary.optional(),
  wb_user_id: NullableString,
  wb_username: z.string().optional().describe("Only with include_usernames"),
  wb_run_id: NullableString,
  wb_run_step: NullableInt,
  wb_run_step_end: NullableInt,
  deleted_at: NullableString,
  storage_size_bytes: NullableInt,
  total_storage_size_bytes: NullableInt,
});

export const CallReadRes = z.object({ call: CallSchemaRes.nullable().describe("null when no such call (or it was deleted)") });
export const CallsQueryRes = z.object({ calls: z.array(CallSchemaRes) });

export const CallsQueryStatsRes = z.object({ count: z.int().min(0), has_more: z.boolean(), total_storage_size_bytes: z.number().nullable().optional() });
export type CallsQueryStatsResponse = z.output<typeof CallsQueryStatsRes>;

/** Token counts of a call with its descendants, per model; costs are null unless `include_costs`. */
const AggregatedUsage = z.object({
  requests: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  cache_read_input_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
  prompt_tokens_total_cost: z.number().nullable(),
  completion_tokens_total_cost: z.number().nullable(),
  cache_read_input_tokens_total_cost: z.number().nullable(),
  cache_creation_input_tokens_total_cost: z.number().nullable(),
});

export const CallsUsageRes = z.object({
  call_usage: z.record(z.string(), z.record(z.string(), AggregatedUsage)).describe("call id → model → usage"),
  unfinished_call_ids: z.array(z.string()),
});

/** One time bucket: `timestamp` (and `model` for usage), `count`, and `<agg>_<metric>` / `p<NN>_<metric>` values. */
const StatsBucket = z.object({ timestamp: z.string() }).catchall(z.union([z.string(), z.number(), z.null()]));

export const CallStatsRes = z.object({
  start: z.string(),
  end: z.string(),
  granularity: z.number(),
  timezone: z.string(),
  usage_buckets: z.array(StatsBucket),
  call_buckets: z.array(StatsBucket),
});

export const ThreadRes = z.object({
  thread_id: z.string(),
  turn_count: z.int().min(0),
  start_time: z.string(),
  last_updated: z.string(),
  first_turn_id: z.string().nullable(),
  last_turn_id: z.string().nullable(),
  p50_turn_duration_ms: z.number().nullable(),
  p99_turn_duration_ms: z.number().nullable(),
});
