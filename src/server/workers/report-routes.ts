import type { FastifyInstance } from "fastify";
import type { Transaction } from "kysely";
import { appendJobEvent } from "../../store/job-events.js";
import { LeaseLostError, releaseLease, renewLease, withLease } from "../../store/job-leases.js";
import { failJob } from "../../store/job-lifecycle.js";
import { decodeJson } from "../../store/json.js";
import type { Database } from "../../store/schema.js";
import { endActiveJob, getTrainingJobById } from "../../store/training-jobs.js";
import { checkGradientStep, checkStarted, finiteMetrics, type TrainerProgress, TrainerProtocolError } from "../../worker/trainer-protocol.js";
import { ApiError, notFound } from "../errors.js";
import { defineRoute } from "../routes.js";
import { leaseLost, remoteLease } from "./remote-lease.js";
import { EventReq, EventRes, FailReq, FailRes, HeartbeatReq, HeartbeatRes, ReleaseReq, ReleaseRes, WorkerJobParams } from "./schemas.js";

const tags = ["workers"];

/**
 * What a worker reports about a job it holds: heartbeats (which renew the lease and say when the
 * job was cancelled), events in the trainer protocol's order, a failure, or giving the job back.
 * Every write goes through the lease (`withLease`), exactly as the built-in runner's do.
 */
export async function reportRoutes(app: FastifyInstance): Promise<void> {
  const { store, config } = app.services;
  const { db } = store;

  defineRoute(
    app,
    {
      method: "POST",
      url: "/jobs/:job_id/heartbeat",
      summary: "Renew the lease of a held job; says whether the worker still holds it",
      tags,
      params: WorkerJobParams,
      body: HeartbeatReq,
      response: HeartbeatRes,
      security: "bearer",
    },
    async ({ params, body }, request) => {
      const owned = await renewLease(db, remoteLease(app, request, params.job_id, body.worker));
      const job = await getTrainingJobById(db, params.job_id);
      if (!job) throw notFound(`Training job '${params.job_id}' not found`);
      return { owned, status: owned ? "running" : job.status, message: owned ? null : (job.error_message ?? "the job is held by another worker") };
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/jobs/:job_id/events", summary: "Append training_started or a gradient_step to a held job", tags, params: WorkerJobParams, body: EventReq, response: EventRes, security: "bearer" },
    async ({ params, body }, request) => {
      const lease = remoteLease(app, request, params.job_id, body.worker);
      try {
        return await withLease(db, lease, async (trx) => {
          const progress = await trainerProgress(trx, lease.jobId);
          if (body.type !== "training_started") checkGradientStep(progress);
          const data = body.type === "training_started" ? { num_sequences: checkStarted(progress, body.data.num_sequences) } : finiteMetrics(body.data);
          const event = await appendJobEvent(trx, lease.jobId, body.type, data);
          return { id: event.id };
        });
      } catch (error) {
        if (error instanceof TrainerProtocolError) {
          // As with the built-in trainer: a trainer that breaks the order fails its job.
          await failJob(db, lease, error.message).catch(ignoreLeaseLost);
          throw new ApiError(409, `${error.message}; the job has failed`, { type: "ConflictError" });
        }
        throw await asLeaseLost(error, lease.jobId);
      }
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/jobs/:job_id/fail", summary: "End a held job as failed with one training_failed event", tags, params: WorkerJobParams, body: FailReq, response: FailRes, security: "bearer" },
    async ({ params, body }, request) => {
      const lease = remoteLease(app, request, params.job_id, body.worker);
      try {
        await withLease(db, lease, (trx) => endActiveJob(trx, lease.jobId, "failed", body.message));
      } catch (error) {
        throw await asLeaseLost(error, lease.jobId);
      }
      return { status: "failed" };
    },
  );

  defineRoute(
    app,
    {
      method: "POST",
      url: "/jobs/:job_id/release",
      summary: "Give a held job back (shutdown): queued again if it wrote no event yet, else failed",
      tags,
      params: WorkerJobParams,
      body: ReleaseReq,
      response: ReleaseRes,
      security: "bearer",
    },
    async ({ params, body }, request) => {
      const outcome = await releaseLease(db, remoteLease(app, request, params.job_id, body.worker), { maxAttempts: config.jobs.maxAttempts });
      if (outcome === undefined) throw leaseLost(await getTrainingJobById(db, params.job_id));
      return { outcome };
    },
  );

  async function asLeaseLost(error: unknown, jobId: string): Promise<unknown> {
    if (!(error instanceof LeaseLostError)) return error;
    const job = await getTrainingJobById(db, jobId);
    return job ? leaseLost(job) : notFound(`Training job '${jobId}' not found`);
  }
}

/** The trainer protocol's progress of a job, from its events (the job row is locked by the caller's lease update). */
export async function trainerProgress(trx: Transaction<Database>, jobId: string): Promise<TrainerProgress> {
  const events = await trx.selectFrom("training_job_events").select(["type", "data"]).where("job_id", "=", jobId).orderBy("seq").execute();
  const started = events.find((event) => event.type === "training_started");
  return {
    announced: started ? Number(decodeJson<{ num_sequences: number }>(started.data).num_sequences) : undefined,
    steps: events.filter((event) => event.type === "gradient_step").length,
  };
}

function ignoreLeaseLost(error: unknown): void {
  if (!(error instanceof LeaseLostError)) throw error;
}
