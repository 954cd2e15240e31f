import { randomUUID } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { CursorNotFoundError } from "./errors.js";
import { decodeJson, encodeJson } from "./json.js";
import { type CursorPage, toCursorPage } from "./pagination.js";
import type { Database } from "./schema.js";
import { nowIso } from "./time.js";

export type JobEventType = "training_started" | "gradient_step" | "training_ended" | "training_failed";

export interface JobEvent {
  id: string;
  type: JobEventType;
  data: Record<string, unknown>;
}

/**
 * Appends an event after the job's last one. Callers hold the job row (they updated it earlier in
 * the same transaction), so no other writer appends to the same job concurrently; the unique
 * (job_id, seq) constraint still refuses a duplicate if one ever tried.
 */
export async function appendJobEvent(trx: Transaction<Database>, jobId: string, type: JobEventType, data: Record<string, unknown>): Promise<JobEvent> {
  const last = await trx
    .selectFrom("training_job_events")
    .select((eb) => eb.fn.max("seq").as("seq"))
    .where("job_id", "=", jobId)
    .executeTakeFirst();
  const event = { id: randomUUID(), type, data };
  await trx
    .insertInto("training_job_events")
    .values({ id: event.id, job_id: jobId, seq: Number(last?.seq ?? 0) + 1, type, data: encodeJson(data), created_at: nowIso() })
    .execute();
  return event;
}

export async function countJobEvents(db: Kysely<Database> | Transaction<Database>, jobId: string): Promise<number> {
  const row = await db
    .selectFrom("training_job_events")
    .select((eb) => eb.fn.countAll().as("count"))
    .where("job_id", "=", jobId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** One page of a job's events in creation order; `after` must name one of them. */
export async function pageJobEvents(db: Kysely<Database>, jobId: string, query: { after?: string; limit: number }): Promise<CursorPage<JobEvent>> {
  let select = db.selectFrom("training_job_events").select(["id", "type", "data"]).where("job_id", "=", jobId);
  if (query.after !== undefined) {
    const cursor = await db.selectFrom("training_job_events").select("seq").where("job_id", "=", jobId).where("id", "=", query.after).executeTakeFirst();
    if (!cursor) throw new CursorNotFoundError(query.after);
    select = select.where("seq", ">", cursor.seq);
  }
  const rows = await select
    .orderBy("seq")
    .limit(query.limit + 1)
    .execute();
  return toCursorPage(
    rows.map((row) => ({ id: row.id, type: row.type as JobEventType, data: decodeJson<Record<string, unknown>>(row.data) })),
    query.limit,
  );
}

/** Every event of a job in order (tests and diagnostics). */
export async function listJobEvents(db: Kysely<Database>, jobId: string): Promise<(JobEvent & { seq: number })[]> {
  const rows = await db.selectFrom("training_job_events").select(["id", "seq", "type", "data"]).where("job_id", "=", jobId).orderBy("seq").execute();
  return rows.map((row) => ({ id: row.id, seq: row.seq, type: row.type as JobEventType, data: decodeJson<Record<string, unknown>>(row.data) }));
}
