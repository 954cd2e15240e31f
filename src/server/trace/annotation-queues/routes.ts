import type { FastifyInstance } from "fastify";
import type { AnnotationQueueService, QueueItemView } from "../../../trace/annotation-queues.js";
import { queueFields, queueItemFields } from "../../../store/trace/sql/annotation-queues.js";
import { stringifyJsonLossless } from "../../../trace/json/lossless.js";
import { defineRoute } from "../../routes.js";
import { sendJsonLines } from "../common/json-lines.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";
import { resolveProject, traceUserId } from "../common/project.js";
import {
  AnnotationQueueAddCallsReq,
  AnnotationQueueAddCallsRes,
  AnnotationQueueCreateReq,
  AnnotationQueueCreateRes,
  AnnotationQueueItemProgressReq,
  AnnotationQueueItemProgressRes,
  type AnnotationQueueItemResponse,
  AnnotationQueueItemsQueryReq,
  AnnotationQueueItemsQueryRes,
  AnnotationQueueReadRes,
  AnnotationQueueRes,
  AnnotationQueueStatsReq,
  AnnotationQueueStatsRes,
  AnnotationQueueUpdateReq,
  AnnotationQueuesQueryReq,
  ItemPath,
  ProjectQuery,
  QueuePath,
} from "./protocol.js";

/** An item as the API shows it: its stored fields with the annotator's state after `added_by`, in Weave's schema order. */
function itemSchemaOf(item: QueueItemView): AnnotationQueueItemResponse {
  const { created_at, created_by, updated_at, deleted_at, ...head } = queueItemFields(item);
  return {
    ...head,
    annotation_state: item.annotationState,
    annotator_user_id: item.annotatorUserId,
    ...{ created_at, created_by, updated_at, deleted_at },
    position_in_queue: item.positionInQueue ?? null,
  };
}

/** Annotation queues, their items and annotator progress (`docs/api/trace.md#annotation-queues`). */
export async function annotationQueueRoutes(app: FastifyInstance, options: { queues: AnnotationQueueService }): Promise<void> {
  useLosslessJson(app);
  const { queues } = options;
  const common = traceRoute("annotation queues");

  defineRoute(app, { method: "POST", url: "/annotation_queues", summary: "Create an annotation queue", body: AnnotationQueueCreateReq, response: AnnotationQueueCreateRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.project_id);
    return { id: await queues.create(projectId, { name: body.name, description: body.description, scorerRefs: body.scorer_refs }, traceUserId(request)) };
  });

  defineRoute(
    app,
    { method: "POST", url: "/annotation_queues/query", summary: "List annotation queues as JSON Lines", body: AnnotationQueuesQueryReq, stream: AnnotationQueueRes, streamFormat: "jsonl", ...common },
    async ({ body }, request, reply) => {
      const { projectId } = resolveProject(request, body.project_id);
      const found = await queues.query(projectId, { name: body.name ?? undefined, sortBy: body.sort_by ?? undefined, limit: body.limit ?? undefined, offset: body.offset ?? undefined });
      return sendJsonLines(request, reply, found.map(queueFields), stringifyJsonLossless);
    },
  );

  defineRoute(app, { method: "POST", url: "/annotation_queues/stats", summary: "Item counts of annotation queues", body: AnnotationQueueStatsReq, response: AnnotationQueueStatsRes, ...common }, async ({ body }, request) => {
    const { projectId } = resolveProject(request, body.project_id);
    const stats = await queues.stats(projectId, body.queue_ids);
    return { stats: stats.map((entry) => ({ queue_id: entry.queueId, total_items: entry.totalItems, completed_items: entry.completedItems })) };
  });

  defineRoute(
    app,
    { method: "GET", url: "/annotation_queues/:queue_id", summary: "Read an annotation queue", params: QueuePath, query: ProjectQuery, response: AnnotationQueueReadRes, ...common },
    async ({ params, query }, request) => {
      const { projectId } = resolveProject(request, query.project_id);
      return { queue: queueFields(await queues.read(projectId, params.queue_id)) };
    },
  );

  defineRoute(
    app,
    { method: "PUT", url: "/annotation_queues/:queue_id", summary: "Update an annotation queue", params: QueuePath, body: AnnotationQueueUpdateReq, response: AnnotationQueueReadRes, ...common },
    async ({ params, body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      const updated = await queues.update(projectId, params.queue_id, {
        name: body.name ?? undefined,
        description: body.description ?? undefined,
        scorerRefs: body.scorer_refs ?? undefined,
      });
      return { queue: queueFields(updated) };
    },
  );

  defineRoute(
    app,
    { method: "DELETE", url: "/annotation_queues/:queue_id", summary: "Delete an annotation queue", params: QueuePath, query: ProjectQuery, response: AnnotationQueueReadRes, ...common },
    async ({ params, query }, request) => {
      const { projectId } = resolveProject(request, query.project_id);
      return { queue: queueFields(await queues.delete(projectId, params.queue_id)) };
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/annotation_queues/:queue_id/items", summary: "Add calls to an annotation queue", params: QueuePath, body: AnnotationQueueAddCallsReq, response: AnnotationQueueAddCallsRes, ...common },
    async ({ params, body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      const added = await queues.addCalls(projectId, params.queue_id, body.call_ids, body.display_fields, traceUserId(request));
      return { added_count: added.addedCount, duplicates: added.duplicates };
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/annotation_queues/:queue_id/items/query", summary: "Query the items of an annotation queue", params: QueuePath, body: AnnotationQueueItemsQueryReq, response: AnnotationQueueItemsQueryRes, ...common },
    async ({ params, body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      const filter = body.filter ?? {};
      const items = await queues.queryItems(projectId, params.queue_id, traceUserId(request), {
        filter: {
          id: filter.id ?? undefined,
          callId: filter.call_id ?? undefined,
          callOpName: filter.call_op_name ?? undefined,
          callTraceId: filter.call_trace_id ?? undefined,
          addedBy: filter.added_by ?? undefined,
          annotationStates: filter.annotation_states ?? undefined,
        },
        sortBy: body.sort_by ?? undefined,
        limit: body.limit ?? undefined,
        offset: body.offset ?? undefined,
        includePosition: body.include_position,
      });
      return { items: items.map(itemSchemaOf) };
    },
  );

  defineRoute(
    app,
    {
      method: "POST",
      url: "/annotation_queues/:queue_id/items/:item_id/progress",
      summary: "Record an annotator's progress on an item",
      params: ItemPath,
      body: AnnotationQueueItemProgressReq,
      response: AnnotationQueueItemProgressRes,
      ...common,
    },
    async ({ params, body }, request) => {
      const { projectId } = resolveProject(request, body.project_id);
      return { item: itemSchemaOf(await queues.updateProgress(projectId, params.queue_id, params.item_id, traceUserId(request), body.annotation_state)) };
    },
  );
}
