import type { Kysely, Transaction } from "kysely";
import { isUniqueViolation } from "./errors.js";
import { countJobEvents } from "./job-events.js";
import type { Database } from "./schema.js";
import { nowIso } from "./time.js";
import { ACTIVE_STATUSES, endActiveJob, type TrainingJobRow } from "./training-jobs.js";

/**
 * Leases over training jobs (docs/api/training.md#job-states). A worker claims a queued job with one conditional
 * update, renews the lease while it works, and writes everything (events, the checkpoint, the end)
 * through `withLease`, which first re-asserts ownership in the same transaction. A worker that
 * died, was cancelled or lost its lease therefore can never write again.
 */

export interface Lease {
  jobId: string;
  workerId: string;
  leaseMs: number;
}

/** The worker no longer owns the job: it was cancelled, reaped or finished elsewhere. */
export class LeaseLostError extends Error {
  constructor(readonly jobId: string) {
    super(`lost the lease on training job ${jobId}`);
  }
}

/**
 * Which base models' jobs a worker takes (routing, docs/configuration.md): the built-in trainer
 * takes every base model except those of the PyTorch pool, a PyTorch worker only the ones it names.
 */
export type BaseModelFilter = { only: readonly string[] } | { except: readonly string[] };

const expiry = (leaseMs: number) => new Date(Date.now() + leaseMs).toISOString();

/**
 * Claims up to `limit` jobs, each the oldest active job of its model (so one model's jobs run in
 * submission order, one at a time). The partial unique index on running jobs backs the rule up
 * when workers race.
 */
export async function claimJobs(db: Kysely<Database>, workerId: string, options: { leaseMs: number; limit: number; baseModels?: BaseModelFilter }): Promise<TrainingJobRow[]> {
  if (options.limit <= 0) return [];
  const filter = options.baseModels;
  if (filter && "only" in filter && filter.only.length === 0) return [];
  let query = db.selectFrom("training_jobs as j").select(["j.id", "j.model_id", "j.position"]).where("j.status", "=", "queued");
  if (filter) {
    const names = "only" in filter ? filter.only : filter.except;
    if (names.length > 0) {
      const ofBaseModels = db
        .selectFrom("models as m")
        .select("m.id")
        .where("m.base_model", "in", [...names]);
      query = query.where("j.model_id", "only" in filter ? "in" : "not in", ofBaseModels);
    }
  }
  const candidates = await query
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom("training_jobs as e").select("e.id").whereRef("e.model_id", "=", "j.model_id").where("e.status", "in", ACTIVE_STATUSES).whereRef("e.position", "<", "j.position"))))
    .orderBy("j.created_at")
    .orderBy("j.id")
    .limit(options.limit * 4)
    .execute();

  const claimed: TrainingJobRow[] = [];
  for (const candidate of candidates) {
    if (claimed.length >= options.limit) break;
    const now = nowIso();
    try {
      const result = await db
        .updateTable("training_jobs")
        .set((eb) => ({
          status: "running",
          lease_owner: workerId,
          last_worker: workerId,
          lease_expires_at: expiry(options.leaseMs),
          attempts: eb("attempts", "+", 1),
          started_at: eb.fn.coalesce("started_at", eb.val(now)),
        }))
        .where("id", "=", candidate.id)
        .where("status", "=", "queued")
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom("training_jobs as e").select("e.id").where("e.model_id", "=", candidate.model_id).where("e.status", "in", ACTIVE_STATUSES).where("e.position", "<", candidate.position))),
        )
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) continue;
    } catch (error) {
      if (isUniqueViolation(error)) continue; // another worker started a job of this model first
      throw error;
    }
    const row = await db.selectFrom("training_jobs").selectAll().where("id", "=", candidate.id).executeTakeFirstOrThrow();
    claimed.push(row);
  }
  return claimed;
}

/**
 * Runs `fn` in a transaction that first renews the lease; throws LeaseLostError (and writes
 * nothing) if the worker no longer owns the running job. The renewing update also locks the job
 * row, so cancellation and the reaper wait for this transaction, and vice versa.
 */
export async function withLease<T>(db: Kysely<Database>, lease: Lease, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable("training_jobs")
      .set({ lease_expires_at: expiry(lease.leaseMs) })
      .where("id", "=", lease.jobId)
      .where("lease_owner", "=", lease.workerId)
      .where("status", "=", "running")
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw new LeaseLostError(lease.jobId);
    return fn(trx);
  });
}

/** Extends the lease (the heartbeat); false once the worker no longer owns the job. */
export async function renewLease(db: Kysely<Database>, lease: Lease): Promise<boolean> {
  try {
    await withLease(db, lease, async () => undefined);
    return true;
  } catch (error) {
    if (error instanceof LeaseLostError) return false;
    throw error;
  }
}

export interface ReapOptions {
  maxAttempts: number;
}

/**
 * Takes back the jobs whose worker stopped renewing its lease. A job that had not written an
 * event yet goes back to the queue (at its old position) until it has been claimed `maxAttempts`
 * times; any other ends as failed with one training_failed event, because its client may already
 * have read part of the event stream. Returns the ids taken back.
 */
export async function reapExpiredLeases(db: Kysely<Database>, options: ReapOptions): Promise<{ requeued: string[]; failed: string[] }> {
  const now = nowIso();
  const expired = await db.selectFrom("training_jobs").select("id").where("status", "=", "running").where("lease_expires_at", "<", now).execute();
  const outcome = { requeued: [] as string[], failed: [] as string[] };
  for (const { id } of expired) {
    const result = await db.transaction().execute(async (trx) => {
      const taken = await trx.updateTable("training_jobs").set({ lease_owner: null, lease_expires_at: null }).where("id", "=", id).where("status", "=", "running").where("lease_expires_at", "<", now).executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return undefined;
      return requeueOrFail(trx, id, options.maxAttempts, "its worker stopped renewing the job's lease (the process died or hung)");
    });
    if (result) outcome[result].push(id);
  }
  return outcome;
}

/** Gives a job back on shutdown: the same rule as an expired lease, without waiting for it to expire. */
export async function releaseLease(db: Kysely<Database>, lease: Lease, options: ReapOptions): Promise<"requeued" | "failed" | undefined> {
  try {
    return await withLease(db, lease, (trx) => requeueOrFail(trx, lease.jobId, options.maxAttempts, "its worker shut down"));
  } catch (error) {
    if (error instanceof LeaseLostError) return undefined;
    throw error;
  }
}

async function requeueOrFail(trx: Transaction<Database>, id: string, maxAttempts: number, why: string): Promise<"requeued" | "failed"> {
  const job = await trx.selectFrom("training_jobs").select("attempts").where("id", "=", id).executeTakeFirstOrThrow();
  const events = await countJobEvents(trx, id);
  if (events === 0 && job.attempts < maxAttempts) {
    await trx.updateTable("training_jobs").set({ status: "queued", lease_owner: null, lease_expires_at: null, base_step: null, kl_reference_step: null }).where("id", "=", id).execute();
    return "requeued";
  }
  const message = events === 0 ? `Training job failed: ${why}, and it had already been attempted ${job.attempts} times` : `Training job failed: ${why} after training had started; a partly trained job is not resumed`;
  await endActiveJob(trx, id, "failed", message);
  return "failed";
}
