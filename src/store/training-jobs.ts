import { randomUUID } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { isUniqueViolation } from "./errors.js";
import { appendJobEvent } from "./job-events.js";
import { encodeJson } from "./json.js";
import type { Database, TrainingJobKind, TrainingJobsTable, TrainingJobStatus } from "./schema.js";
import { nowIso } from "./time.js";

export type TrainingJobRow = TrainingJobsTable;

export const ACTIVE_STATUSES: TrainingJobStatus[] = ["queued", "running"];

export interface NewTrainingJob {
  entity: string;
  modelId: string;
  kind: TrainingJobKind;
  input: unknown;
  config: unknown;
  requestHash: string;
  idempotencyKey?: string;
}

export type CreateJobResult = { created: true; job: TrainingJobRow } | { created: false; job: TrainingJobRow };

const MAX_INSERT_ATTEMPTS = 8;

/**
 * Persists a queued job at the end of its model's queue. With an Idempotency-Key already used by
 * the entity, the earlier job is returned instead (`created: false`), also when two requests race.
 */
export async function createTrainingJob(db: Kysely<Database>, input: NewTrainingJob): Promise<CreateJobResult> {
  for (let attempt = 0; ; attempt++) {
    if (input.idempotencyKey !== undefined) {
      const existing = await findJobByIdempotencyKey(db, input.entity, input.idempotencyKey);
      if (existing) return { created: false, job: existing };
    }
    const last = await db
      .selectFrom("training_jobs")
      .select((eb) => eb.fn.max("position").as("position"))
      .where("model_id", "=", input.modelId)
      .executeTakeFirst();
    const row: TrainingJobRow = {
      id: randomUUID(),
      entity: input.entity,
      model_id: input.modelId,
      kind: input.kind,
      status: "queued",
      position: Number(last?.position ?? 0) + 1,
      input: encodeJson(input.input),
      config: encodeJson(input.config),
      request_hash: input.requestHash,
      idempotency_key: input.idempotencyKey ?? null,
      attempts: 0,
      lease_owner: null,
      lease_expires_at: null,
      last_worker: null,
      base_step: null,
      kl_reference_step: null,
      result_step: null,
      error_message: null,
      created_at: nowIso(),
      started_at: null,
      ended_at: null,
    };
    try {
      await db.insertInto("training_jobs").values(row).execute();
      return { created: true, job: row };
    } catch (error) {
      // Another job took the same queue position, or the same Idempotency-Key: look again.
      if (!isUniqueViolation(error) || attempt + 1 >= MAX_INSERT_ATTEMPTS) throw error;
    }
  }
}

export async function findJobByIdempotencyKey(db: Kysely<Database>, entity: string, key: string): Promise<TrainingJobRow | undefined> {
  return db.selectFrom("training_jobs").selectAll().where("entity", "=", entity).where("idempotency_key", "=", key).executeTakeFirst();
}

/** The job with this id if it belongs to `entity`; another entity's job is indistinguishable from a missing one. */
export async function getTrainingJob(db: Kysely<Database>, entity: string, id: string): Promise<TrainingJobRow | undefined> {
  return db.selectFrom("training_jobs").selectAll().where("id", "=", id).where("entity", "=", entity).executeTakeFirst();
}

export async function getTrainingJobById(db: Kysely<Database>, id: string): Promise<TrainingJobRow | undefined> {
  return db.selectFrom("training_jobs").selectAll().where("id", "=", id).executeTakeFirst();
}

/** A queued or running job of the model whose request hashed to `requestHash`. */
export async function findActiveJobByRequest(db: Kysely<Database>, modelId: string, requestHash: string): Promise<TrainingJobRow | undefined> {
  return db.selectFrom("training_jobs").selectAll().where("model_id", "=", modelId).where("request_hash", "=", requestHash).where("status", "in", ACTIVE_STATUSES).orderBy("position").executeTakeFirst();
}

export async function listActiveJobsOfModel(db: Kysely<Database>, modelId: string): Promise<TrainingJobRow[]> {
  return db.selectFrom("training_jobs").selectAll().where("model_id", "=", modelId).where("status", "in", ACTIVE_STATUSES).orderBy("position").execute();
}

export type CancelResult = { cancelled: true; job: TrainingJobRow } | { cancelled: false; job: TrainingJobRow | undefined };

/**
 * Ends a queued or running job as `cancelled` with one training_failed event, in one transaction.
 * A worker running it loses its lease: its next write (an event, the checkpoint) is refused.
 */
export async function cancelTrainingJob(db: Kysely<Database>, entity: string, id: string, message: string): Promise<CancelResult> {
  return db.transaction().execute(async (trx) => {
    const ended = await endActiveJob(trx, id, "cancelled", message, entity);
    const job = await trx.selectFrom("training_jobs").selectAll().where("id", "=", id).where("entity", "=", entity).executeTakeFirst();
    return ended ? { cancelled: true, job: job! } : { cancelled: false, job };
  });
}

/** Cancels every queued or running job of a model (inside the caller's transaction). */
export async function cancelActiveJobsOfModel(trx: Transaction<Database>, modelId: string, message: string): Promise<number> {
  const active = await trx.selectFrom("training_jobs").select("id").where("model_id", "=", modelId).where("status", "in", ACTIVE_STATUSES).execute();
  let count = 0;
  for (const { id } of active) if (await endActiveJob(trx, id, "cancelled", message)) count++;
  return count;
}

/**
 * Moves an active job to a terminal status and appends its training_failed event, if (and only
 * if) the job was still active: the conditional update is what makes the terminal event unique.
 */
export async function endActiveJob(trx: Transaction<Database>, id: string, status: "failed" | "cancelled", message: string, entity?: string): Promise<boolean> {
  let update = trx.updateTable("training_jobs").set({ status, error_message: message, ended_at: nowIso(), lease_owner: null, lease_expires_at: null }).where("id", "=", id).where("status", "in", ACTIVE_STATUSES);
  if (entity !== undefined) update = update.where("entity", "=", entity);
  const result = await update.executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await appendJobEvent(trx, id, "training_failed", { error_message: message });
  return true;
}
