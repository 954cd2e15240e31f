import type { FastifyInstance } from "fastify";
import { pageJobEvents } from "../../../store/job-events.js";
import { decodeJson } from "../../../store/json.js";
import { cancelTrainingJob, createTrainingJob, findActiveJobByRequest, findJobByIdempotencyKey, getTrainingJob, type NewTrainingJob, type TrainingJobRow } from "../../../store/training-jobs.js";
import { isWebSftInput, type SftJobInput } from "../../../worker/job-input.js";
import { principalOf } from "../../auth.js";
import { ApiError, notFound } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { checkKlReferenceStep, hashRequest, readIdempotencyKey, replayIdempotent, toJobResponse } from "./job-requests.js";
import { JobEventItem, JobEventsQuery, JobIdParams, JobRes, RlJobCreateReq, SftJobCreateReq } from "./protocol.js";
import { jobWaitingFor } from "./job-waiting.js";
import { ownModel } from "../common/own-model.js";
import { cursorPageOf } from "../common/schemas.js";
import { resolveSftRequest } from "./sft-request.js";

const tags = ["training"];

/**
 * Training jobs (docs/api/training.md#jobs): creation validates everything, persists the job and
 * answers at once; a worker runs it. Beyond the interface: cancellation and Idempotency-Key.
 */
export async function jobRoutes(app: FastifyInstance): Promise<void> {
  const { store, blobs } = app.services;

  const ownJob = async (entity: string, id: string): Promise<TrainingJobRow> => {
    const job = await getTrainingJob(store.db, entity, id);
    if (!job) throw notFound(`Training job '${id}' not found`);
    return job;
  };
  const enqueue = async (job: NewTrainingJob): Promise<TrainingJobRow> => {
    const result = await createTrainingJob(store.db, job);
    if (!result.created) return replayIdempotent(result.job, job.requestHash);
    app.services.onJobQueued?.();
    return result.job;
  };

  defineRoute(
    app,
    { method: "POST", url: "/preview/training-jobs", summary: "Create an RL training job (one step) from trajectory groups", tags, body: RlJobCreateReq, response: JobRes, security: "bearer" },
    async ({ body }, request) => {
      const { entity } = principalOf(request);
      const idempotencyKey = readIdempotencyKey(request);
      const requestHash = hashRequest("rl", request.body);
      if (idempotencyKey !== undefined) {
        const earlier = await findJobByIdempotencyKey(store.db, entity, idempotencyKey);
        if (earlier) return toJobResponse(replayIdempotent(earlier, requestHash));
      }
      const model = await ownModel(store.db, entity, body.model_id);
      await checkKlReferenceStep(store, model.id, body.experimental_config);
      const job = await enqueue({
        entity,
        modelId: model.id,
        kind: "rl",
        input: { trajectory_groups: body.trajectory_groups },
        config: body.experimental_config,
        requestHash,
        idempotencyKey,
      });
      return toJobResponse(job);
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/preview/sft-training-jobs", summary: "Create an SFT training job from an uploaded artifact", tags, body: SftJobCreateReq, response: JobRes, security: "bearer" },
    async ({ body }, request) => {
      const { entity } = principalOf(request);
      const idempotencyKey = readIdempotencyKey(request);
      const requestHash = hashRequest("sft", request.body);
      if (idempotencyKey !== undefined) {
        const earlier = await findJobByIdempotencyKey(store.db, entity, idempotencyKey);
        if (earlier) return toJobResponse(replayIdempotent(earlier, requestHash));
      }
      const model = await ownModel(store.db, entity, body.model_id);
      const { input, config } = await resolveSftRequest(store, blobs, entity, body);
      // The same request on the same data while it is still queued or running is a double submit.
      const active = await findActiveJobByRequest(store.db, model.id, requestHash);
      if (active && idempotencyKey === undefined && sameArtifact(active, input)) return toJobResponse(active);
      const job = await enqueue({ entity, modelId: model.id, kind: "sft", input, config, requestHash, idempotencyKey });
      return toJobResponse(job);
    },
  );

  defineRoute(app, { method: "GET", url: "/preview/training-jobs/:training_job_id", summary: "Read a training job", tags, params: JobIdParams, response: JobRes, security: "bearer" }, async ({ params }, request) => {
    const job = await ownJob(principalOf(request).entity, params.training_job_id);
    return toJobResponse(job, await jobWaitingFor(store, app.services.config.jobs, job));
  });

  defineRoute(
    app,
    {
      method: "GET",
      url: "/preview/training-jobs/:training_job_id/events",
      summary: "List a training job's events in order (cursor page)",
      tags,
      params: JobIdParams,
      query: JobEventsQuery,
      response: cursorPageOf(JobEventItem),
      security: "bearer",
    },
    async ({ params, query }, request) => {
      const job = await ownJob(principalOf(request).entity, params.training_job_id);
      return pageJobEvents(store.db, job.id, query);
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/preview/training-jobs/:training_job_id/cancel", summary: "Cancel a queued or running training job", tags, params: JobIdParams, response: JobRes, security: "bearer" },
    async ({ params }, request) => {
      const { entity } = principalOf(request);
      const result = await cancelTrainingJob(store.db, entity, params.training_job_id, "Training job was cancelled");
      if (!result.job) throw notFound(`Training job '${params.training_job_id}' not found`);
      if (!result.cancelled) throw new ApiError(409, `Training job '${result.job.id}' has already ended (${result.job.status})`, { type: "ConflictError" });
      return toJobResponse(result.job);
    },
  );
}

/** The same data: the same artifact version, or the same web URL (fetched again by each job). */
function sameArtifact(job: TrainingJobRow, input: SftJobInput): boolean {
  const earlier = decodeJson<SftJobInput>(job.input);
  if (isWebSftInput(earlier) || isWebSftInput(input)) return isWebSftInput(earlier) && isWebSftInput(input) && earlier.training_data_url === input.training_data_url;
  return earlier.artifact.id === input.artifact.id;
}
