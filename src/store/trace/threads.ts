import { QueryError } from "./query/errors.js";
import type { SortBy } from "./query/ast.js";
import type { TraceDb } from "./call-tables.js";
import { millisBetween } from "./timestamps.js";

export interface ThreadsQuery {
  projectId: string;
  /** Canonical timestamps: only turns started after / before them count. */
  afterDatetime?: string | null;
  beforeDatetime?: string | null;
  threadIds?: string[] | null;
  sortBy?: SortBy[] | null;
  limit?: number | null;
  offset?: number | null;
}

export interface ThreadSchema {
  thread_id: string;
  turn_count: number;
  start_time: string;
  last_updated: string;
  first_turn_id: string | null;
  last_turn_id: string | null;
  p50_turn_duration_ms: number | null;
  p99_turn_duration_ms: number | null;
}

const SORT_FIELDS = new Set(["thread_id", "turn_count", "start_time", "last_updated", "p50_turn_duration_ms", "p99_turn_duration_ms"]);

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = p * (sorted.length - 1);
  const low = Math.floor(rank);
  return sorted[low]! + (sorted[Math.ceil(rank)]! - sorted[low]!) * (rank - low);
}

/**
 * Threads of a project (`docs/api/trace.md#threads`) from their turn calls (calls whose id is their
 * turn_id): turn count, first start, last end, the first and last turns, and turn duration
 * percentiles. Threads without an ended turn are skipped. Default order: last_updated descending.
 */
export async function queryThreads(db: TraceDb, q: ThreadsQuery): Promise<ThreadSchema[]> {
  for (const key of q.sortBy ?? []) {
    if (!SORT_FIELDS.has(key.field)) throw new QueryError(`Unsupported sort field: ${key.field}. Supported fields: ${[...SORT_FIELDS].join(", ")}`);
  }
  let select = db
    .selectFrom("trace_calls")
    .select(["id", "thread_id", "started_at", "ended_at"])
    .where("project_id", "=", q.projectId)
    .where("deleted_at", "is", null)
    .where("op_name", "is not", null)
    .where("thread_id", "is not", null)
    .where("thread_id", "<>", "")
    .whereRef("id", "=", "turn_id");
  if (q.threadIds && q.threadIds.length > 0) select = select.where("thread_id", "in", q.threadIds);
  if (q.afterDatetime) select = select.where("started_at", ">", q.afterDatetime);
  if (q.beforeDatetime) select = select.where("started_at", "<", q.beforeDatetime);
  const turns = await select.execute();

  const threads = new Map<string, { id: string; started_at: string; ended_at: string | null }[]>();
  for (const turn of turns) {
    const list = threads.get(turn.thread_id!) ?? [];
    list.push({ id: turn.id, started_at: turn.started_at!, ended_at: turn.ended_at });
    threads.set(turn.thread_id!, list);
  }

  const rows: ThreadSchema[] = [];
  for (const [threadId, list] of threads) {
    const ended = list.filter((turn) => turn.ended_at !== null);
    if (ended.length === 0) continue;
    const first = list.reduce((a, b) => (b.started_at < a.started_at ? b : a));
    const last = ended.reduce((a, b) => (b.ended_at! > a.ended_at! ? b : a));
    const durations = ended.map((turn) => millisBetween(turn.started_at, turn.ended_at!)).sort((a, b) => a - b);
    rows.push({
      thread_id: threadId,
      turn_count: list.length,
      start_time: first.started_at,
      last_updated: last.ended_at!,
      first_turn_id: first.id,
      last_turn_id: last.id,
      p50_turn_duration_ms: percentile(durations, 0.5),
      p99_turn_duration_ms: percentile(durations, 0.99),
    });
  }

  const keys = q.sortBy && q.sortBy.length > 0 ? q.sortBy : [{ field: "last_updated", direction: "desc" as const }];
  rows.sort((a, b) => {
    for (const key of keys) {
      const x = a[key.field as keyof ThreadSchema];
      const y = b[key.field as keyof ThreadSchema];
      if (x === y) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      const order = x < y ? -1 : 1;
      return key.direction === "desc" ? -order : order;
    }
    return a.thread_id < b.thread_id ? -1 : a.thread_id > b.thread_id ? 1 : 0;
  });
  const offset = q.offset ?? 0;
  return rows.slice(offset, q.limit === null || q.limit === undefined ? undefined : offset + q.limit);
}
