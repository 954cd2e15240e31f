import type { Kysely, Selectable } from "kysely";
import { decodeJson, encodeJson } from "../../json.js";
import type { Database } from "../../schema.js";
import type { TraceAnnotationQueueItemsTable, TraceAnnotationQueuesTable } from "../schema.js";
import { chunked } from "../../dialect.js";

export interface QueueRecord {
  id: string;
  projectId: string;
  name: string;
  description: string;
  scorerRefs: string[];
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export interface QueueItemRecord {
  id: string;
  projectId: string;
  queueId: string;
  callId: string;
  callStartedAt: string;
  callEndedAt: string | null;
  callOpName: string;
  callTraceId: string;
  displayFields: string[];
  addedBy: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

/**
 * A queue's fields by their snake_case names, the names of both its table's columns and the trace API's
 * `AnnotationQueueSchema` (in that schema's order); list fields stay lists (the table stores them as JSON).
 */
export function queueFields(queue: QueueRecord) {
  return {
    id: queue.id,
    project_id: queue.projectId,
    name: queue.name,
    description: queue.description,
    scorer_refs: queue.scorerRefs,
    created_at: queue.createdAt,
    created_by: queue.createdBy,
    updated_at: queue.updatedAt,
    deleted_at: queue.deletedAt,
  };
}

/** An item's fields by their column (and API) names, in the API schema's order; see `queueFields`. */
export function queueItemFields(item: QueueItemRecord) {
  return {
    id: item.id,
    project_id: item.projectId,
    queue_id: item.queueId,
    call_id: item.callId,
    call_started_at: item.callStartedAt,
    call_ended_at: item.callEndedAt,
    call_op_name: item.callOpName,
    call_trace_id: item.callTraceId,
    display_fields: item.displayFields,
    added_by: item.addedBy,
    created_at: item.createdAt,
    created_by: item.createdBy,
    updated_at: item.updatedAt,
    deleted_at: item.deletedAt,
  };
}

export interface QueueItemFilter {
  id?: string;
  callId?: string;
  callOpName?: string;
  callTraceId?: string;
  addedBy?: string;
}

export type AnnotationState = "unstarted" | "in_progress" | "completed" | "skipped";

/** Annotation queues, their items (calls with a cached header) and each annotator's progress. */
export interface AnnotationQueueRepository {
  insertQueue(queue: QueueRecord): Promise<void>;
  /** The queue, deleted or not. */
  findQueue(projectId: string, id: string): Promise<QueueRecord | undefined>;
  listLiveQueues(projectId: string): Promise<QueueRecord[]>;
  updateQueue(projectId: string, id: string, fields: { name?: string; description?: string; scorerRefs?: string[] }, updatedAt: string): Promise<void>;
  softDeleteQueue(projectId: string, id: string, deletedAt: string): Promise<void>;
  /** Which of these calls the queue already holds. */
  queuedCallIds(queueId: string, callIds: string[]): Promise<Set<string>>;
  insertItems(items: QueueItemRecord[]): Promise<void>;
  listItems(projectId: string, queueId: string, filter: QueueItemFilter): Promise<QueueItemRecord[]>;
  /** One annotator's state per item of the queue. */
  progressOf(queueId: string, annotatorId: string): Promise<Map<string, AnnotationState>>;
  upsertProgress(progress: { itemId: string; annotatorId: string; projectId: string; queueId: string; state: AnnotationState }, now: string): Promise<void>;
  /** Items per queue, and items completed or skipped by at least one annotator. */
  stats(projectId: string, queueIds: string[]): Promise<Map<string, { total: number; completed: number }>>;
}

function toQueue(row: Selectable<TraceAnnotationQueuesTable>): QueueRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    description: row.description,
    scorerRefs: decodeJson<string[]>(row.scorer_refs),
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

function toItem(row: Selectable<TraceAnnotationQueueItemsTable>): QueueItemRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    queueId: row.queue_id,
    callId: row.call_id,
    callStartedAt: row.call_started_at,
    callEndedAt: row.call_ended_at,
    callOpName: row.call_op_name,
    callTraceId: row.call_trace_id,
    displayFields: decodeJson<string[]>(row.display_fields),
    addedBy: row.added_by,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

export class SqlAnnotationQueueRepository implements AnnotationQueueRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insertQueue(queue: QueueRecord): Promise<void> {
    await this.db
      .insertInto("trace_annotation_queues")
      .values({ ...queueFields(queue), scorer_refs: encodeJson(queue.scorerRefs) })
      .execute();
  }

  async findQueue(projectId: string, id: string): Promise<QueueRecord | undefined> {
    const row = await this.db.selectFrom("trace_annotation_queues").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
    return row ? toQueue(row) : undefined;
  }

  async listLiveQueues(projectId: string): Promise<QueueRecord[]> {
    const rows = await this.db.selectFrom("trace_annotation_queues").selectAll().where("project_id", "=", projectId).where("deleted_at", "is", null).execute();
    return rows.map(toQueue);
  }

  async updateQueue(projectId: string, id: string, fields: { name?: string; description?: string; scorerRefs?: string[] }, updatedAt: string): Promise<void> {
    await this.db
      .updateTable("trace_annotation_queues")
      .set({
        updated_at: updatedAt,
        ...(fields.name !== undefined ? { name: fields.name } : {}),
        ...(fields.description !== undefined ? { description: fields.description } : {}),
        ...(fields.scorerRefs !== undefined ? { scorer_refs: encodeJson(fields.scorerRefs) } : {}),
      })
      .where("project_id", "=", projectId)
      .where("id", "=", id)
      .execute();
  }

  async softDeleteQueue(projectId: string, id: string, deletedAt: string): Promise<void> {
    await this.db.updateTable("trace_annotation_queues").set({ deleted_at: deletedAt, updated_at: deletedAt }).where("project_id", "=", projectId).where("id", "=", id).execute();
  }

  async queuedCallIds(queueId: string, callIds: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const chunk of chunked(callIds)) {
      const rows = await this.db.selectFrom("trace_annotation_queue_items").select("call_id").where("queue_id", "=", queueId).where("call_id", "in", chunk).execute();
      for (const row of rows) found.add(row.call_id);
    }
    return found;
  }

  async insertItems(items: QueueItemRecord[]): Promise<void> {
    for (const chunk of chunked(items, 200)) {
      await this.db
        .insertInto("trace_annotation_queue_items")
        .values(chunk.map((item) => ({ ...queueItemFields(item), display_fields: encodeJson(item.displayFields) })))
        .onConflict((oc) => oc.columns(["queue_id", "call_id"]).doNothing())
        .execute();
    }
  }

  async listItems(projectId: string, queueId: string, filter: QueueItemFilter): Promise<QueueItemRecord[]> {
    let query = this.db.selectFrom("trace_annotation_queue_items").selectAll().where("project_id", "=", projectId).where("queue_id", "=", queueId).where("deleted_at", "is", null);
    if (filter.id !== undefined) query = query.where("id", "=", filter.id);
    if (filter.callId !== undefined) query = query.where("call_id", "=", filter.callId);
    if (filter.callOpName !== undefined) query = query.where("call_op_name", "=", filter.callOpName);
    if (filter.callTraceId !== undefined) query = query.where("call_trace_id", "=", filter.callTraceId);
    if (filter.addedBy !== undefined) query = query.where("added_by", "=", filter.addedBy);
    return (await query.execute()).map(toItem);
  }

  async progressOf(queueId: string, annotatorId: string): Promise<Map<string, AnnotationState>> {
    const rows = await this.db.selectFrom("trace_annotator_progress").select(["item_id", "annotation_state"]).where("queue_id", "=", queueId).where("annotator_id", "=", annotatorId).execute();
    return new Map(rows.map((row) => [row.item_id, row.annotation_state as AnnotationState]));
  }

  async upsertProgress(progress: { itemId: string; annotatorId: string; projectId: string; queueId: string; state: AnnotationState }, now: string): Promise<void> {
    await this.db
      .insertInto("trace_annotator_progress")
      .values({
        item_id: progress.itemId,
        annotator_id: progress.annotatorId,
        project_id: progress.projectId,
        queue_id: progress.queueId,
        annotation_state: progress.state,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(["item_id", "annotator_id"]).doUpdateSet({ annotation_state: progress.state, updated_at: now }))
      .execute();
  }

  async stats(projectId: string, queueIds: string[]): Promise<Map<string, { total: number; completed: number }>> {
    const stats = new Map<string, { total: number; completed: number }>();
    for (const chunk of chunked([...new Set(queueIds)])) {
      const totals = await this.db
        .selectFrom("trace_annotation_queue_items")
        .select((eb) => ["queue_id", eb.fn.countAll<number>().as("total")])
        .where("project_id", "=", projectId)
        .where("queue_id", "in", chunk)
        .where("deleted_at", "is", null)
        .groupBy("queue_id")
        .execute();
      const completed = await this.db
        .selectFrom("trace_annotator_progress")
        .select((eb) => ["queue_id", eb.fn.count<number>("item_id").distinct().as("completed")])
        .where("project_id", "=", projectId)
        .where("queue_id", "in", chunk)
        .where("annotation_state", "in", ["completed", "skipped"])
        .groupBy("queue_id")
        .execute();
      for (const row of totals) stats.set(row.queue_id, { total: Number(row.total), completed: 0 });
      for (const row of completed) stats.set(row.queue_id, { total: stats.get(row.queue_id)?.total ?? 0, completed: Number(row.completed) });
    }
    return stats;
  }
}
