import fs from "node:fs";
import path from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import { readModelConfig } from "../../engine/checkpoint/model-config.js";
import { adapterFiles } from "../../engine/lora/files.js";
import { createLoraAdapter } from "../../engine/lora/init.js";
import { checkpointMetricHistory, getCheckpointByStep } from "../../store/checkpoints.js";
import { failJob } from "../../store/job-lifecycle.js";
import { decodeJson } from "../../store/json.js";
import { getModel, type ModelRow } from "../../store/models.js";
import type { TrainingJobRow } from "../../store/training-jobs.js";
import { adapterSeed, loraShape } from "../../worker/engine-trainer.js";
import { readJobWork } from "../../worker/job-input.js";
import type { ModelLoraConfig } from "../../worker/trainer.js";
import { ApiError, notFound } from "../errors.js";
import { defineRoute } from "../routes.js";
import { type JobPlan, klReferenceOf } from "./job-plan.js";
import { planJobInThread } from "./job-plan-in-thread.js";
import { heldJob, remoteLease } from "./remote-lease.js";
import { ThreadSlots } from "./thread-slots.js";
import { AdapterParams, BaseModelFileQuery, BaseModelFilesRes, BaseModelQuery, FILE_BYTES, JobPlanRes, WorkerJobParams, WorkerQuery } from "./schemas.js";

const tags = ["workers"];

/**
 * What a worker downloads to train a job it holds: the plan (rows already tokenized by the server),
 * the adapter to start from (the model's checkpoint, or the same fresh adapter the built-in trainer
 * would make), the KL reference adapter, and the base model's files.
 */
export async function planRoutes(app: FastifyInstance): Promise<void> {
  const { store, blobs, catalog, config } = app.services;
  const { db } = store;
  const planSlots = new ThreadSlots(config.jobs.planThreads);

  const baseModelDir = (id: string): string => {
    const entry = catalog.get(id);
    if (!entry) throw notFound(`Base model '${id}' is not served here`);
    return entry.dir;
  };
  const modelOf = async (job: TrainingJobRow): Promise<ModelRow> => {
    const model = await getModel(db, job.entity, job.model_id);
    if (!model) throw notFound(`Model '${job.model_id}' not found`);
    return model;
  };

  defineRoute(
    app,
    { method: "GET", url: "/jobs/:job_id/plan", summary: "A held job's optimizer steps: tokenized rows, learning rates, loss settings", tags, params: WorkerJobParams, query: WorkerQuery, response: JobPlanRes, security: "bearer" },
    async ({ params, query }, request, reply) => {
      const lease = remoteLease(app, request, params.job_id, query.worker);
      const job = await heldJob(app, lease);
      const model = await modelOf(job);
      const modelDir = baseModelDir(model.base_model);
      try {
        // Only I/O and the small config here; decoding, tokenizing, packing and serializing run on a thread.
        const work = await readJobWork(job, blobs, { limits: config.jobs.webTrainingData });
        const baseStep = job.base_step ?? 0;
        const jobConfig = decodeJson<{ scale_learning_rate_by_reward_std_dev?: boolean }>(job.config);
        const scalesByRewardStdDev = job.kind === "rl" && jobConfig.scale_learning_rate_by_reward_std_dev === true;
        const json = await planJobInThread(
          {
            modelDir,
            work,
            context: {
              jobId: job.id,
              baseModel: model.base_model,
              baseStep,
              klReference: await klReferenceKind(model, klReferenceOf(job.kind, jobConfig, baseStep)),
              rewardStdDevHistory: scalesByRewardStdDev ? await checkpointMetricHistory(db, job.model_id, "train/reward_std_dev", baseStep) : [],
            },
          },
          { memoryMb: config.jobs.planMemoryMb, slots: planSlots },
        );
        // The thread sends the plan as JSON bytes; the tests' answer checks parse it back.
        request.routeOptions.config.checkAnswer?.(JSON.parse(json.toString("utf8")));
        return reply.type("application/json; charset=utf-8").send(json);
      } catch (error) {
        if (error instanceof ApiError) throw error;
        // Bad data (an SFT row, a token outside the vocabulary, …) fails the job, as on the built-in trainer.
        const message = error instanceof Error ? error.message : String(error);
        await failJob(db, lease, message).catch(() => undefined);
        throw new ApiError(409, `The job cannot be trained and has failed: ${message}`, { type: "ConflictError" });
      }
    },
  );

  defineRoute(
    app,
    {
      method: "GET",
      url: "/jobs/:job_id/adapters/:which/:name",
      summary: "A file of the adapter a held job starts from, or of its KL reference",
      tags,
      params: AdapterParams,
      query: WorkerQuery,
      rawResponse: FILE_BYTES,
      security: "bearer",
    },
    async ({ params, query }, request, reply) => {
      const job = await heldJob(app, remoteLease(app, request, params.job_id, query.worker));
      const model = await modelOf(job);
      const baseStep = job.base_step ?? 0;
      let files: Record<string, string> | null;
      if (params.which === "start") files = await checkpointFiles(model.id, baseStep);
      else {
        const work = decodeJson<{ kl_penalty_coef?: number }>(job.config);
        const step = job.kind === "rl" && (work.kl_penalty_coef ?? 0) > 0 ? job.kl_reference_step : null;
        files = step === null ? null : await checkpointFiles(model.id, step);
        if (files === null) throw notFound("This job's KL reference is the base model: it has no adapter files");
      }
      if (files === null) {
        // No checkpoint yet: the fresh adapter the built-in trainer would start from (seeded by the model's id).
        const fresh = adapterFiles(createFreshAdapter(model));
        const bytes = fresh[params.name];
        if (!bytes) throw notFound(`A fresh adapter has no ${params.name}`);
        return send(reply, Buffer.from(bytes));
      }
      const digest = files[params.name];
      if (!digest) throw notFound(`The checkpoint has no ${params.name}`);
      return send(reply, await blobs.get(digest));
    },
  );

  defineRoute(app, { method: "GET", url: "/base-models/files", summary: "The files of a served base model's directory", tags, query: BaseModelQuery, response: BaseModelFilesRes, security: "bearer" }, async ({ query }) => {
    const dir = baseModelDir(query.base_model);
    const files = fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => ({ name: entry.name, size: fs.statSync(path.join(dir, entry.name)).size }))
      .sort((a, b) => a.name.localeCompare(b.name));
    return { files };
  });

  defineRoute(
    app,
    { method: "GET", url: "/base-models/file", summary: "One file of a served base model's directory", tags, query: BaseModelFileQuery, rawResponse: FILE_BYTES, security: "bearer" },
    async ({ query }, _request, reply) => {
      const dir = baseModelDir(query.base_model);
      if (query.name !== path.basename(query.name) || query.name.startsWith(".")) throw notFound(`Base model '${query.base_model}' has no file '${query.name}'`);
      const file = path.join(dir, query.name);
      if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw notFound(`Base model '${query.base_model}' has no file '${query.name}'`);
      reply.header("content-length", fs.statSync(file).size);
      return reply.type("application/octet-stream").send(fs.createReadStream(file));
    },
  );

  async function checkpointFiles(modelId: string, step: number): Promise<Record<string, string> | null> {
    const row = await getCheckpointByStep(db, modelId, step);
    return row?.files ? decodeJson<Record<string, string>>(row.files) : null;
  }

  async function klReferenceKind(model: ModelRow, step: number | null | undefined): Promise<JobPlan["kl_reference"]> {
    if (step === undefined) return null;
    if (step === null) return "base";
    return (await checkpointFiles(model.id, step)) ? "adapter" : "base";
  }

  function createFreshAdapter(model: ModelRow) {
    const lora = model.lora_config === null ? null : decodeJson<ModelLoraConfig>(model.lora_config);
    return createLoraAdapter(readModelConfig(baseModelDir(model.base_model)), { seed: adapterSeed(model.id), baseModelNameOrPath: model.base_model, ...loraShape(lora) });
  }
}

function send(reply: FastifyReply, bytes: Buffer): FastifyReply {
  return reply.type("application/octet-stream").send(bytes);
}
