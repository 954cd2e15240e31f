import type { Kysely } from "kysely";
import { getCheckpointByStep, insertCheckpoint, latestCheckpoint } from "./checkpoints.js";
import { appendJobEvent, type JobEvent, type JobEventType } from "./job-events.js";
import { type Lease, withLease } from "./job-leases.js";
import { decodeJson } from "./json.js";
import type { Database } from "./schema.js";
import { nowIso } from "./time.js";
import { endActiveJob } from "./training-jobs.js";

/** A model's weights at one step: `files` maps adapter file name → blob digest; null = base weights. */
export interface CheckpointState {
  step: number;
  files: Record<string, string> | null;
}

/** A step the job needs that is not there (e.g. a KL reference that was never trained). */
export class MissingCheckpointError extends Error {}

/** The weights a KL penalty compares against: a checkpoint, or (step null) the base weights. */
export interface ReferenceState {
  step: number | null;
  files: Record<string, string> | null;
}

/**
 * Fixes what a claimed job trains from: the model's latest checkpoint (step 0 = base weights when
 * there is none) and, when asked, its KL reference (`referenceStepFor` returns a step, null for
 * the base weights, or undefined for none). Both are recorded on the job so that deleting those
 * checkpoints is refused while it runs.
 */
export async function beginJob(db: Kysely<Database>, lease: Lease, modelId: string, referenceStepFor?: (baseStep: number) => number | null | undefined): Promise<{ base: CheckpointState; reference: ReferenceState | undefined }> {
  return withLease(db, lease, async (trx) => {
    const latest = await latestCheckpoint(trx, modelId);
    const base: CheckpointState = latest ? { step: latest.step, files: decodeFiles(latest.files) } : { step: 0, files: null };
    const referenceStep = referenceStepFor?.(base.step);
    let reference: ReferenceState | undefined;
    if (referenceStep === null) reference = { step: null, files: null };
    else if (referenceStep !== undefined) {
      const row = await getCheckpointByStep(trx, modelId, referenceStep);
      if (row) reference = { step: row.step, files: decodeFiles(row.files) };
      else if (referenceStep === 0) reference = { step: 0, files: null };
      else throw new MissingCheckpointError(`the KL reference checkpoint (step ${referenceStep}) does not exist`);
    }
    await trx
      .updateTable("training_jobs")
      .set({ base_step: base.step, kl_reference_step: reference?.step ?? null })
      .where("id", "=", lease.jobId)
      .execute();
    return { base, reference };
  });
}

export async function recordJobEvent(db: Kysely<Database>, lease: Lease, type: JobEventType, data: Record<string, unknown>): Promise<JobEvent> {
  return withLease(db, lease, (trx) => appendJobEvent(trx, lease.jobId, type, data));
}

/**
 * Makes the new checkpoint visible and ends the job, atomically: the checkpoint row, the
 * training_ended event and the status change commit together or not at all. The adapter's blobs
 * must already be stored.
 */
export async function commitJobCheckpoint(db: Kysely<Database>, lease: Lease, modelId: string, checkpoint: CheckpointState): Promise<void> {
  await withLease(db, lease, async (trx) => {
    await insertCheckpoint(trx, { modelId, step: checkpoint.step, files: checkpoint.files });
    await appendJobEvent(trx, lease.jobId, "training_ended", {});
    await trx.updateTable("training_jobs").set({ status: "succeeded", result_step: checkpoint.step, ended_at: nowIso(), lease_owner: null, lease_expires_at: null }).where("id", "=", lease.jobId).execute();
  });
}

/** Ends the job as failed with one training_failed event. */
export async function failJob(db: Kysely<Database>, lease: Lease, message: string): Promise<void> {
  await withLease(db, lease, (trx) => endActiveJob(trx, lease.jobId, "failed", message));
}

function decodeFiles(files: string | null): Record<string, string> | null {
  return files === null ? null : decodeJson<Record<string, string>>(files);
}
