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
