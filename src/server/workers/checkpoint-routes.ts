import type { FastifyInstance } from "fastify";
import { CheckpointError } from "../../engine/checkpoint/errors.js";
import { readModelConfig } from "../../engine/checkpoint/model-config.js";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, loadLoraAdapter } from "../../engine/lora/files.js";
import { OPTIMIZER_STATE_FILE, readOptimizerState } from "../../engine/train/optimizer-file.js";
import { getCheckpointByStep } from "../../store/checkpoints.js";
import { LeaseLostError, withLease } from "../../store/job-leases.js";
import { commitJobCheckpoint, failJob } from "../../store/job-lifecycle.js";
import { decodeJson } from "../../store/json.js";
import { getModel } from "../../store/models.js";
import { getTrainingJobById } from "../../store/training-jobs.js";
import { checkFinished, TrainerProtocolError } from "../../worker/trainer-protocol.js";
import { ApiError, notFound } from "../errors.js";
import { defineRoute } from "../routes.js";
import { RequestValidationError } from "../validation.js";
import { heldJob, leaseLost, remoteLease } from "./remote-lease.js";
import { trainerProgress } from "./report-routes.js";
import { CheckpointReq, CheckpointRes, UploadParams, UploadRes, WorkerQuery } from "./schemas.js";

const tags = ["workers"];
/** An adapter file is at most this large (a rank-64 adapter of a 70B model is well under it). */
const MAX_FILE_BYTES = 4 * 1024 * 1024 * 1024 - 1;

/**
 * The end of a job a worker trained: its files are uploaded one at a time (raw bytes, stored
 * content-addressed in the blob store), then one call commits them as the model's next checkpoint
 * with training_ended, atomically and through the lease: `commitJobCheckpoint`, the same commit
 * the built-in runner makes. The adapter is loaded against the base model first, as the engine will
 * load it to serve it, so a bad upload is refused and the worker may send it again.
 */
export async function checkpointRoutes(app: FastifyInstance): Promise<void> {
  const { store, blobs, catalog } = app.services;
  const { db } = store;
  app.addContentTypeParser("application/octet-stream", { parseAs: "buffer", bodyLimit: MAX_FILE_BYTES }, (_request, body, done) => done(null, body));

  defineRoute(
    app,
    {
      method: "PUT",
      url: "/jobs/:job_id/files/:name",
      summary: "Upload one file of a held job's new checkpoint (application/octet-stream)",
      tags,
      params: UploadParams,
      query: WorkerQuery,
      response: UploadRes,
      security: "bearer",
      bodyLimit: MAX_FILE_BYTES,
    },
    async ({ params, query }, request) => {
      await heldJob(app, remoteLease(app, request, params.job_id, query.worker));
      if (!Buffer.isBuffer(request.body)) throw new ApiError(415, "Unsupported Media Type: send the file's bytes as application/octet-stream");
      const digest = await blobs.put(request.body);
      return { name: params.name, digest, size: request.body.length };
    },
  );

  defineRoute(
    app,
    {
      method: "POST",
      url: "/jobs/:job_id/checkpoint",
      summary: "Commit the uploaded files as the model's next checkpoint and end the job",
      tags,
      params: UploadParams.pick({ job_id: true }),
      body: CheckpointReq,
      response: CheckpointRes,
      security: "bearer",
    },
    async ({ params, body }, request) => {
      const lease = remoteLease(app, request, params.job_id, body.worker);
      const job = await heldJob(app, lease);
      const model = await getModel(db, job.entity, job.model_id);
      if (!model) throw notFound(`Model '${job.model_id}' not found`);
      const baseStep = job.base_step ?? 0;
      try {
        await withLease(db, lease, async (trx) => checkFinished(await trainerProgress(trx, lease.jobId)));
      } catch (error) {
        if (error instanceof TrainerProtocolError) {
          await failJob(db, lease, error.message).catch(() => undefined);
          throw new ApiError(409, `${error.message}; the job has failed`, { type: "ConflictError" });
        }
        if (error instanceof LeaseLostError) throw leaseLost(await getTrainingJobById(db, lease.jobId));
        throw error;
      }
      let files: Record<string, string> | null;
      if (body.files === null) {
        const base = baseStep > 0 ? await getCheckpointByStep(db, model.id, baseStep) : undefined;
        files = base?.files ? decodeJson<Record<string, string>>(base.files) : null;
      } else {
        files = { ...body.files } as Record<string, string>;
        await checkAdapter(files, model.base_model);
      }
      try {
        await commitJobCheckpoint(db, lease, model.id, { step: baseStep + 1, files });
      } catch (error) {
        if (error instanceof LeaseLostError) throw leaseLost(await getTrainingJobById(db, lease.jobId));
        throw error;
      }
      return { step: baseStep + 1 };
    },
  );

  /** 422 unless the files are a PEFT adapter of the base model (and optimizer moments that fit it). */
  async function checkAdapter(files: Record<string, string>, baseModel: string): Promise<void> {
    const refuse = (message: string) => RequestValidationError.single(["body", "files"], message);
    for (const name of [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE]) if (!files[name]) throw refuse(`a checkpoint needs ${name}`);
    for (const [name, digest] of Object.entries(files)) if (!(await blobs.has(digest))) throw refuse(`${name}: no uploaded file has digest ${digest}; upload it first`);
    const base = catalog.get(baseModel);
    if (!base) throw new ApiError(409, `The base model '${baseModel}' is not served here, so the adapter cannot be checked`, { type: "ConflictError" });
    try {
      const adapter = loadLoraAdapter({ configFile: blobs.localPath(files[ADAPTER_CONFIG_FILE]!), weightsFile: blobs.localPath(files[ADAPTER_WEIGHTS_FILE]!) }, { config: readModelConfig(base.dir) });
      if (files[OPTIMIZER_STATE_FILE]) {
        const state = readOptimizerState(blobs.localPath(files[OPTIMIZER_STATE_FILE]));
        const sizes = adapter.parameters().map((tensor) => tensor.length);
        const fits = state.expAvg.length === sizes.length && sizes.every((size, i) => state.expAvg[i]!.length === size && state.expAvgSq[i]!.length === size);
        if (!fits) throw refuse(`${OPTIMIZER_STATE_FILE} does not fit the adapter's ${sizes.length} parameter tensors`);
      }
    } catch (error) {
      if (!(error instanceof CheckpointError)) throw error;
      const detail = error.message.startsWith(`${error.file}: `) ? error.message.slice(error.file.length + 2) : error.message;
      throw refuse(`the adapter does not fit base model '${baseModel}': ${detail}`);
    }
  }
}
