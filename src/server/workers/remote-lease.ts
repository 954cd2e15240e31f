import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Lease } from "../../store/job-leases.js";
import { getTrainingJobById, type TrainingJobRow } from "../../store/training-jobs.js";
import { principalOf } from "../auth.js";
import { ApiError, notFound } from "../errors.js";

/**
 * The lease owner id of an external worker: its key's id and its own name, so no other key can
 * write to a job it holds.
 */
export function remoteWorkerId(request: FastifyRequest, worker: string): string {
  return `remote:${principalOf(request).keyId}:${worker}`;
}

export function remoteLease(app: FastifyInstance, request: FastifyRequest, jobId: string, worker: string): Lease {
  return { jobId, workerId: remoteWorkerId(request, worker), leaseMs: app.services.config.jobs.leaseMs };
}

/** The job, which this worker must hold: 404 for an unknown id, 409 once the lease is gone. */
export async function heldJob(app: FastifyInstance, lease: Lease): Promise<TrainingJobRow> {
  const job = await getTrainingJobById(app.services.store.db, lease.jobId);
  if (!job) throw notFound(`Training job '${lease.jobId}' not found`);
  if (job.status !== "running" || job.lease_owner !== lease.workerId) throw leaseLost(job);
  return job;
}

/** 409: the worker must stop; the job was cancelled, taken back after its lease expired, or ended. */
export function leaseLost(job: TrainingJobRow | undefined): ApiError {
  const state = job ? (job.status === "running" || job.status === "queued" ? `${job.status} under another lease` : job.status) : "gone";
  return new ApiError(409, `This worker no longer holds training job '${job?.id ?? "?"}' (it is ${state}); stop working on it`, { type: "ConflictError", extra: { status: job?.status ?? null } });
}
