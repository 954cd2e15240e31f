import { z } from "zod";
import { Limit, Offset, ProjectId, SortBy, StringList } from "../common/schemas.js";

/** Requests of the annotation queue endpoints (`docs/api/trace.md#annotation-queues`); unknown fields are ignored, as Weave does. */
const AnnotationStateEnum = z.enum(["unstarted", "in_progress", "completed", "skipped"]);
export const QueuePath = z.object({ queue_id: z.string() });
export const ItemPath = z.object({ queue_id: z.string(), item_id: z.string() });
export const ProjectQuery = z.object({ project_id: ProjectId });
export const AnnotationQueueCreateReq = z.object({ project_id: ProjectId, name: z.string(), description: z.string().default(""), scorer_refs: StringList });
export const AnnotationQueuesQueryReq = z.object({ project_id: ProjectId, name: z.string().nullish(), sort_by: z.array(SortBy).nullish(), limit: Limit, offset: Offset });
export const AnnotationQueueStatsReq = z.object({ project_id: ProjectId, queue_ids: StringList });
export const AnnotationQueueUpdateReq = z.object({ project_id: ProjectId, name: z.string().nullish(), description: z.string().nullish(), scorer_refs: StringList.nullish() });
export const AnnotationQueueAddCallsReq = z.object({ project_id: ProjectId, call_ids: StringList, display_fields: StringList });
export const AnnotationQueueItemsQueryReq = z.object({
  project_id: ProjectId,
  filter: z
    .object({
      id: z.string().nullish(),
      call_id: z.string().nullish(),
      call_op_name: z.string().nullish(),
      call_trace_id: z.string().nullish(),
      added_by: z.string().nullish(),
      annotation_states: z.array(AnnotationStateEnum).nullish(),
    })
    .nullish(),
  sort_by: z.array(SortBy).nullish(),
  limit: Limit,
  offset: Offset,
  include_position: z.boolean().default(false),
});
export const AnnotationQueueItemProgressReq = z.object({ project_id: ProjectId, annotation_state: z.string() });

/* Answers (`docs/api/trace.md#annotation-queues`). */

export const AnnotationQueueCreateRes = z.object({ id: z.string() });

/** `AnnotationQueueSchema`: a queue as stored. */
export const AnnotationQueueRes = z.object({
  id: z.string(),
  project_id: z.string(),
  name: z.string(),
  description: z.string(),
  scorer_refs: z.array(z.string()),
  created_at: z.string(),
  created_by: z.string(),
  updated_at: z.string(),
  deleted_at: z.string().nullable(),
});

export const AnnotationQueueReadRes = z.object({ queue: AnnotationQueueRes });

export const AnnotationQueueStatsRes = z.object({ stats: z.array(z.object({ queue_id: z.string(), total_items: z.int().min(0), completed_items: z.int().min(0) })) });

export const AnnotationQueueAddCallsRes = z.object({ added_count: z.int().min(0), duplicates: z.int().min(0) });

/** An item with the calling annotator's state on it, in Weave's schema order. */
export const AnnotationQueueItemRes = z.object({
  id: z.string(),
  project_id: z.string(),
  queue_id: z.string(),
  call_id: z.string(),
  call_started_at: z.string(),
  call_ended_at: z.string().nullable(),
  call_op_name: z.string(),
  call_trace_id: z.string(),
  display_fields: z.array(z.string()),
  added_by: z.string().nullable(),
  annotation_state: AnnotationStateEnum,
  annotator_user_id: z.string().nullable(),
  created_at: z.string(),
  created_by: z.string(),
  updated_at: z.string(),
  deleted_at: z.string().nullable(),
  position_in_queue: z.int().nullable().describe("Only with include_position"),
});
export type AnnotationQueueItemResponse = z.output<typeof AnnotationQueueItemRes>;

export const AnnotationQueueItemsQueryRes = z.object({ items: z.array(AnnotationQueueItemRes) });
export const AnnotationQueueItemProgressRes = z.object({ item: AnnotationQueueItemRes });
