import type { FastifyInstance } from "fastify";
import { klReferenceStep, type RlTrainingConfig } from "../../engine/train/config.js";
import { claimJobs, reapExpiredLeases } from "../../store/job-leases.js";
import { beginJob, failJob, MissingCheckpointError } from "../../store/job-lifecycle.js";
import { decodeJson } from "../../store/json.js";
import { getModel } from "../../store/models.js";
import type { TrainingJobRow } from "../../store/training-jobs.js";
import { recordWorkerPoll } from "../../store/training-workers.js";
import { pytorchClaimFilter } from "../../worker/routing.js";
import { principalOf } from "../auth.js";
import { defineRoute } from "../routes.js";
import { remoteLease, remoteWorkerId } from "./remote-lease.js";
import { ClaimReq, ClaimRes } from "./schemas.js";

const tags = ["workers"];

/**
 * `POST /v1/worker/claim`: the next job of the PyTorch pool's base models that this worker named,
 * with a lease, by the same claim as `flywheel worker` (`claimJobs`: oldest first, one running job
 * per model). The job's starting checkpoint and KL reference are fixed here, as the built-in runner
 * fixes them when it starts a job. Expired leases are taken back first, so a pool of external
 * workers needs no built-in worker beside it.
 */
export async function claimRoute(app: FastifyInstance): Promise<void> {
  const { store, config } = app.services;
  const { db } = store;

  defineRoute(app, { method: "POST", url: "/claim", summary: "Claim the next training job for some base models, with a lease", tags, body: ClaimReq, response: ClaimRes, security: "bearer" }, async ({ body }, request) => {
    const workerId = remoteWorkerId(request, body.worker);
    await recordWorkerPoll(db, { id: workerId, keyId: principalOf(request).keyId, baseModels: body.base_models });
    await reapExpiredLeases(db, { maxAttempts: config.jobs.maxAttempts });
    const filter = pytorchClaimFilter(config.jobs, body.base_models);
    // A job that cannot start (its KL reference is gone) ends as failed; the worker gets the next one.
    for (let attempt = 0; attempt < 8; attempt++) {
      const [job] = await claimJobs(db, workerId, { leaseMs: config.jobs.leaseMs, limit: 1, baseModels: filter });
      if (!job) return { job: null };
      const started = await startClaimedJob(app, request, job, body.worker);
      if (started) return { job: started };
    }
    return { job: null };
  });
}

async function startClaimedJob(app: FastifyInstance, request: Parameters<typeof remoteLease>[1], job: TrainingJobRow, worker: string) {
  const { db } = app.services.store;
  const lease = remoteLease(app, request, job.id, worker);
  const model = await getModel(db, job.entity, job.model_id);
  if (!model) {
    await failJob(db, lease, `model ${job.model_id} no longer exists`);
    return undefined;
  }
  const config = job.kind === "rl" ? decodeJson<RlTrainingConfig>(job.config) : undefined;
  const referenceStepFor = config ? (base: number) => klReferenceStep(config, base) : undefined;
  try {
    const { base } = await beginJob(db, lease, model.id, referenceStepFor);
    return {
      id: job.id,
      kind: job.kind,
      model: { id: model.id, entity: model.entity, project: model.project, name: model.name, base_model: model.base_model },
      base_step: base.step,
      lease_seconds: lease.leaseMs / 1000,
    };
  } catch (error) {
    if (!(error instanceof MissingCheckpointError)) throw error;
    await failJob(db, lease, error.message);
    return undefined;
  }
}
