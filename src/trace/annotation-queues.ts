import { nowTimestamp } from "../store/trace/timestamps.js";
import type { CallHeaderLookup } from "../store/trace/call-lookup.js";
import { TraceBadRequest, TraceNotFound } from "../store/trace/errors.js";
import { uuidv7 } from "../store/trace/ids.js";
import { compareByCodePoint } from "../python-format.js";
import type { AnnotationQueueRepository, AnnotationState, QueueItemFilter, QueueItemRecord, QueueRecord } from "../store/trace/sql/annotation-queues.js";

export type { AnnotationState, QueueItemRecord, QueueRecord } from "../store/trace/sql/annotation-queues.js";

export interface SortSpec {
  field: string;
  direction: "asc" | "desc";
}

/** An item as one annotator sees it: their own state, and its place in the whole queue. */
export interface QueueItemView extends QueueItemRecord {
  annotationState: AnnotationState;
  annotatorUserId: string | null;
  positionInQueue?: number;
}

const QUEUE_SORT_FIELDS = new Set(["id", "name", "created_at", "updated_at"]);
const ITEM_SORT_FIELDS = new Set(["call_started_at", "call_op_name", "created_at", "updated_at"]);
const PROGRESS_STATES = new Set<AnnotationState>(["in_progress", "completed", "skipped"]);

/**
 * Annotation queues (`docs/api/trace.md#annotation-queues`): queues of calls that annotators work through. Items
 * cache the call's header when added; calls that do not exist are skipped. Each annotator has a
 * state per item; an item counts as completed once any annotator completed or skipped it.
 */
export class AnnotationQueueService {
  constructor(
    private readonly queues: AnnotationQueueRepository,
    private readonly calls: CallHeaderLookup,
    private readonly now: () => string = nowTimestamp,
  ) {}

  async create(projectId: string, input: { name: string; description: string; scorerRefs: string[] }, createdBy: string): Promise<string> {
    if (!input.name.trim()) throw new TraceBadRequest("Queue name must not be empty");
    const now = this.now();
    const id = uuidv7();
    await this.queues.insertQueue({ id, projectId, name: input.name, description: input.description, scorerRefs: input.scorerRefs, createdBy, createdAt: now, updatedAt: now, deletedAt: null });
    return id;
  }

  async query(projectId: string, input: { name?: string; sortBy?: SortSpec[]; limit?: number; offset?: number }): Promise<QueueRecord[]> {
    let queues = await this.queues.listLiveQueues(projectId);
    if (input.name !== undefined) {
      const needle = input.name.toLowerCase();
      queues = queues.filter((queue) => queue.name.toLowerCase().includes(needle));
    }
    const sorts = validSorts(input.sortBy, QUEUE_SORT_FIELDS) ?? [
      { field: "created_at", direction: "desc" },
      { field: "id", direction: "asc" },
    ];
    queues.sort((a, b) => compareBy(sorts, a, b, queueField));
    return page(queues, input.offset, input.limit);
  }

  /** A live queue; 404 when missing or deleted. */
  async read(projectId: string, id: string): Promise<QueueRecord> {
    const queue = await this.queues.findQueue(projectId, id);
    if (!queue || queue.deletedAt !== null) throw new TraceNotFound(`Queue ${id} not found`);
    return queue;
  }

  /** Whether a live queue with this id exists in the project (feedback's `queue_id` check). */
  async queueExists(projectId: string, id: string): Promise<boolean> {
    const queue = await this.queues.findQueue(projectId, id);
    return queue !== undefined && queue.deletedAt === null;
  }

  async update(projectId: string, id: string, fields: { name?: string; description?: string; scorerRefs?: string[] }): Promise<QueueRecord> {
    await this.read(projectId, id);
    if (fields.name !== undefined && !fields.name.trim()) throw new TraceBadRequest("Queue name must not be empty");
    await this.queues.updateQueue(projectId, id, fields, this.now());
    return this.read(projectId, id);
  }

  async delete(projectId: string, id: string): Promise<QueueRecord> {
    await this.read(projectId, id);
    await this.queues.softDeleteQueue(projectId, id, this.now());
    return (await this.queues.findQueue(projectId, id)) as QueueRecord;
  }

  async stats(projectId: string, queueIds: string[]): Promise<{ queueId: string; totalItems: number; completedItems: number }[]> {
    const stats = await this.queues.stats(projectId, queueIds);
    return queueIds.map((queueId) => ({ queueId, totalItems: stats.get(queueId)?.total ?? 0, completedItems: stats.get(queueId)?.completed ?? 0 }));
  }

  async addCalls(projectId: string, queueId: string, callIds: string[], displayFields: string[], addedBy: string): Promise<{ addedCount: number; duplicates: number }> {
    await this.read(projectId, queueId);
    const requested = [...new Set(callIds)];
    const queued = await this.queues.queuedCallIds(queueId, requested);
    const fresh = requested.filter((id) => !queued.has(id));
    const headers = fresh.length > 0 ? await this.calls.findCalls(projectId, fresh) : [];
    const byId = new Map(headers.map((header) => [header.id, header]));
    const now = this.now();
    const items: QueueItemRecord[] = fresh.flatMap((callId) => {
      const header = byId.get(callId);
      if (!header) return [];
      return [
        {
          id: uuidv7(),
          projectId,
          queueId,
          callId,
          callStartedAt: header.startedAt,
          callEndedAt: header.endedAt,
          callOpName: header.opName,
          callTraceId: header.traceId,
          displayFields,
          addedBy,
          createdBy: addedBy,
          createdAt: now,
          updatedAt: now,
          deletedAt: null,
        },
      ];
    });
    await this.queues.insertItems(items);
    // Calls already queued, and repeats within the request, count as duplicates; unknown calls are skipped.
    return { addedCount: items.length, duplicates: callIds.length - fresh.length };
  }

  async queryItems(
    projectId: string,
    queueId: string,
    annotatorId: string,
    input: { filter?: QueueItemFilter & { annotationStates?: AnnotationState[] }; sortBy?: SortSpec[]; limit?: number; offset?: number; includePosition?: boolean },
  ): Promise<QueueItemView[]> {
    await this.read(projectId, queueId);
    const { annotationStates, ...filter } = input.filter ?? {};
    const [items, progress] = await Promise.all([this.queues.listItems(projectId, queueId, filter), this.queues.progressOf(queueId, annotatorId)]);
    const sorts = validSorts(input.sortBy, ITEM_SORT_FIELDS) ?? [
      { field: "created_at", direction: "asc" },
      { field: "id", direction: "asc" },
    ];
    items.sort((a, b) => compareBy(sorts, a, b, itemField));
    let views: QueueItemView[] = items.map((item, index) => {
      const state = progress.get(item.id);
      return {
        ...item,
        annotationState: state ?? "unstarted",
        annotatorUserId: state ? annotatorId : null,
        ...(input.includePosition ? { positionInQueue: index + 1 } : {}),
      };
    });
    if (annotationStates && annotationStates.length > 0) views = views.filter((view) => annotationStates.includes(view.annotationState));
    return page(views, input.offset, input.limit);
  }

  /** Moves one annotator's state of an item: unstarted → any, in_progress → completed|skipped, same → same. */
  async updateProgress(projectId: string, queueId: string, itemId: string, annotatorId: string, state: string): Promise<QueueItemView> {
    if (!PROGRESS_STATES.has(state as AnnotationState)) {
      throw new TraceBadRequest(`Invalid annotation_state '${state}': must be one of in_progress, completed, skipped`);
    }
    const next = state as AnnotationState;
    await this.read(projectId, queueId);
    const [item] = await this.queues.listItems(projectId, queueId, { id: itemId });
    if (!item) throw new TraceNotFound(`Queue item ${itemId} not found in queue ${queueId}`);
    const current = (await this.queues.progressOf(queueId, annotatorId)).get(itemId) ?? "unstarted";
    const allowed = current === next || current === "unstarted" || (current === "in_progress" && (next === "completed" || next === "skipped"));
    if (!allowed) throw new TraceBadRequest(`Invalid state transition from '${current}' to '${next}'`);
    await this.queues.upsertProgress({ itemId, annotatorId, projectId, queueId, state: next }, this.now());
    return { ...item, annotationState: next, annotatorUserId: annotatorId };
  }
}

function validSorts(sortBy: SortSpec[] | undefined, allowed: Set<string>): SortSpec[] | undefined {
  const valid = (sortBy ?? []).filter((sort) => allowed.has(sort.field));
  if (valid.length === 0) return undefined;
  return [...valid, { field: "id", direction: "asc" }];
}

function queueField(queue: QueueRecord, field: string): string {
  switch (field) {
    case "name":
      return queue.name;
    case "created_at":
      return queue.createdAt;
    case "updated_at":
      return queue.updatedAt;
    default:
      return queue.id;
  }
}

function itemField(item: QueueItemRecord, field: string): string {
  switch (field) {
    case "call_started_at":
      return item.callStartedAt;
    case "call_op_name":
      return item.callOpName;
    case "created_at":
      return item.createdAt;
    case "updated_at":
      return item.updatedAt;
    default:
      return item.id;
  }
}

function compareBy<T>(sorts: SortSpec[], a: T, b: T, field: (value: T, name: string) => string): number {
  for (const sort of sorts) {
    const order = compareByCodePoint(field(a, sort.field), field(b, sort.field));
    if (order !== 0) return sort.direction === "desc" ? -order : order;
  }
  return 0;
}

function page<T>(items: T[], offset: number | undefined, limit: number | undefined): T[] {
  const start = offset ?? 0;
  return items.slice(start, limit === undefined ? undefined : start + limit);
}
