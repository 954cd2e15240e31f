import { z } from "zod";
import { JsonObject, ProjectId, SortByList, Timestamp, TraceId, TraceRef } from "../common/schemas.js";
import { zQuery } from "../common/query-schema.js";

/** `FeedbackCreateReq` (`docs/api/trace.md#feedback-schema`); `wb_user_id` is accepted and replaced by the server. */
export const FeedbackCreateReq = z.object({
  id: TraceId.min(1).nullish(),
  project_id: ProjectId,
  weave_ref: TraceRef,
  creator: z.string().nullish(),
  feedback_type: z.string().min(1),
  payload: JsonObject,
  annotation_ref: z.string().nullish(),
  runnable_ref: z.string().nullish(),
  call_ref: z.string().nullish(),
  trigger_ref: z.string().nullish(),
  queue_id: z.string().nullish(),
  scorer_tags: z.array(z.string()).nullish(),
  scorer_tag_reasons: z.record(z.string(), z.string()).nullish(),
  scorer_tag_confidences: z.record(z.string(), z.number()).nullish(),
  scorer_ratings: z.record(z.string(), z.number()).nullish(),
  scorer_rating_reasons: z.record(z.string(), z.string()).nullish(),
  scorer_rating_confidences: z.record(z.string(), z.number()).nullish(),
  span_agent_name: z.string().nullish(),
  span_agent_version: z.string().nullish(),
  span_status_code: z.string().nullish(),
  span_conversation_id: z.string().nullish(),
  span_trace_id: z.string().nullish(),
  scorer_trace_id: z.string().nullish(),
  wb_user_id: z.string().nullish(),
});
export type FeedbackCreateBody = z.output<typeof FeedbackCreateReq>;

export const FeedbackBatchCreateReq = z.object({ batch: z.array(FeedbackCreateReq) });
export const FeedbackReplaceReq = FeedbackCreateReq.extend({ feedback_id: z.string() });

export const FeedbackQueryReq = z.object({
  project_id: ProjectId,
  fields: z.array(z.string()).nullish(),
  query: zQuery.nullish(),
  sort_by: SortByList.nullish(),
  limit: z.int().min(0).nullish(),
  offset: z.int().min(0).nullish(),
});

export const FeedbackPurgeReq = z.object({ project_id: ProjectId, query: zQuery });

export const FeedbackStatsReq = z.object({
  project_id: ProjectId,
  start: Timestamp,
  end: Timestamp.nullish(),
  feedback_type: z.string().nullish(),
  trigger_ref: z.string().nullish(),
  granularity: z.int().min(1).nullish(),
  timezone: z.string().nullish(),
  metrics: z.array(
    z.object({
      json_path: z.string(),
      value_type: z.enum(["numeric", "boolean", "categorical"]).nullish(),
      aggregations: z.array(z.enum(["sum", "avg", "min", "max", "count", "count_true", "count_false"])).nullish(),
      percentiles: z.array(z.number().min(0).max(100)).nullish(),
    }),
  ),
});

export const FeedbackPayloadSchemaReq = z.object({
  project_id: ProjectId,
  start: Timestamp,
  end: Timestamp.nullish(),
  feedback_type: z.string().nullish(),
  trigger_ref: z.string().nullish(),
  sample_limit: z.int().min(1).max(5000).nullish(),
});

/* Answers (`docs/api/trace.md#feedback`). */

/** What a create answers: the row's id and time, the user it was stored for, and the payload as stored (reactions gain their aliases). */
export const FeedbackCreateRes = z.object({ id: z.string(), created_at: z.string(), wb_user_id: z.string().nullable(), payload: z.record(z.string(), z.unknown()) });
export type FeedbackCreateResponse = z.output<typeof FeedbackCreateRes>;

export const FeedbackBatchCreateRes = z.object({ res: z.array(FeedbackCreateRes) });

/** Rows with the asked-for `fields` (columns, or dotted payload paths as keys); all columns by default. */
export const FeedbackQueryRes = z.object({
  result: z.array(z.record(z.string(), z.unknown()).describe("A feedback row, or its asked-for fields")),
  total_count: z.int().min(0).describe("Matches ignoring limit and offset"),
});

/** One time bucket: `timestamp`, `count`, and `<agg>_<slug>` values. */
const FeedbackStatsBucket = z.object({ timestamp: z.string(), count: z.int().min(0) }).catchall(z.union([z.number(), z.null()]));

export const FeedbackStatsRes = z.object({
  start: z.string(),
  end: z.string(),
  granularity: z.number(),
  timezone: z.string(),
  buckets: z.array(FeedbackStatsBucket),
  window_stats: z.record(z.string(), z.record(z.string(), z.number().nullable())).optional().describe("slug → aggregation → value over the whole range"),
});

export const FeedbackPayloadSchemaRes = z.object({ paths: z.array(z.object({ json_path: z.string(), value_type: z.enum(["numeric", "boolean", "categorical"]) })) });
