import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { CheckpointError } from "../../../engine/checkpoint/errors.js";
import { readModelConfig } from "../../../engine/checkpoint/model-config.js";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, loadLoraAdapter } from "../../../engine/lora/files.js";
import { findArtifactVersion } from "../../../store/artifacts.js";
import { isUniqueViolation } from "../../../store/errors.js";
import { importCheckpoint } from "../../../store/checkpoints.js";
import { getModel } from "../../../store/models.js";
import { listActiveJobsOfModel } from "../../../store/training-jobs.js";
import { principalOf } from "../../auth.js";
import { ApiError, notFound } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { RequestValidationError } from "../../validation.js";
import { parseArtifactUrl } from "../artifacts/artifact-url.js";
import { ModelIdParams } from "../models/protocol.js";

export const CheckpointImportReq = z.object({
  artifact_url: z.string().min(1).describe("An artifact holding a PEFT adapter (adapter_config.json + adapter_model.safetensors), from POST /v1/preview/artifacts"),
});

export const CheckpointImportRes = z.object({ id: z.uuid(), step: z.number().int(), name: z.string().describe("The checkpoint's model name, wandb-artifact:///entity/project/name:stepN") });

const URL_LOC = ["body", "artifact_url"];

/**
 * `POST /v1/preview/models/{model_id}/checkpoints/import`: a PEFT LoRA adapter made elsewhere,
 * uploaded as an artifact, becomes the model's next checkpoint (step 0 for a model without any),
 * so it is served and trained on like one Flywheel trained. The adapter is checked against the
 * model's base model first: every option and tensor shape, as the engine loads it. The model's
 * `lora_config` becomes the adapter's, since its next jobs train that adapter.
 */
export async function checkpointImportRoute(app: FastifyInstance): Promise<void> {
  const { store, blobs, catalog } = app.services;

  defineRoute(
    app,
    {
      method: "POST",
      url: "/preview/models/:model_id/checkpoints/import",
      summary: "Import a PEFT LoRA adapter uploaded as an artifact as the model's next checkpoint",
      tags: ["training"],
      params: ModelIdParams,
      body: CheckpointImportReq,
      response: CheckpointImportRes,
      security: "bearer",
    },
    async ({ params, body }, request) => {
      const { entity } = principalOf(request);
      const model = await getModel(store.db, entity, params.model_id);
      if (!model) throw notFound(`Model '${params.model_id}' not found`);
      const ref = parseArtifactUrl(body.artifact_url);
      if (typeof ref === "string") throw RequestValidationError.single(URL_LOC, ref);
      const artifact = ref.entity === entity ? await findArtifactVersion(store.db, ref) : undefined;
      if (!artifact) throw RequestValidationError.single(URL_LOC, `artifact '${body.artifact_url}' was not found; upload the adapter's files with POST /v1/preview/artifacts or flywheel checkpoints import`);
      const missing = [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE].filter((name) => !artifact.files[name]);
      if (missing.length > 0) {
        throw RequestValidationError.single(URL_LOC, `artifact v${artifact.version} is not a PEFT adapter: it has no ${missing.join(" or ")} (files: ${Object.keys(artifact.files).join(", ")})`);
      }
      const base = catalog.get(model.base_model);
      if (!base) throw new ApiError(409, `The base model '${model.base_model}' of model '${model.name}' is not served here, so an adapter for it cannot be checked`);

      const files = { [ADAPTER_CONFIG_FILE]: artifact.files[ADAPTER_CONFIG_FILE]!.digest, [ADAPTER_WEIGHTS_FILE]: artifact.files[ADAPTER_WEIGHTS_FILE]!.digest };
      let adapterConfig: ReturnType<typeof loadLoraAdapter>["config"];
      try {
        const adapter = loadLoraAdapter({ configFile: blobs.localPath(files[ADAPTER_CONFIG_FILE]), weightsFile: blobs.localPath(files[ADAPTER_WEIGHTS_FILE]) }, { config: readModelConfig(base.dir) });
        adapterConfig = adapter.config;
      } catch (error) {
        if (!(error instanceof CheckpointError)) throw error;
        // The message names the field or tensor; the blob path it starts with means nothing to the caller.
        const file = error.file === blobs.localPath(files[ADAPTER_CONFIG_FILE]) ? ADAPTER_CONFIG_FILE : ADAPTER_WEIGHTS_FILE;
        const detail = error.message.startsWith(`${error.file}: `) ? error.message.slice(error.file.length + 2) : error.message;
        throw RequestValidationError.single(URL_LOC, `the adapter does not fit base model '${model.base_model}': ${file}: ${detail}`);
      }
      if ((await listActiveJobsOfModel(store.db, model.id)).length > 0) {
        throw new ApiError(409, `Model '${model.name}' has a queued or running training job; import after it ends`, { type: "ConflictError" });
      }
      const loraConfig = { r: adapterConfig.rank, lora_alpha: adapterConfig.alpha, target_modules: adapterConfig.targetModules };
      try {
        const checkpoint = await importCheckpoint(store.db, model.id, files, JSON.stringify(loraConfig));
        return { id: checkpoint.id, step: checkpoint.step, name: `wandb-artifact:///${entity}/${model.project}/${model.name}:step${checkpoint.step}` };
      } catch (error) {
        if (isUniqueViolation(error)) throw new ApiError(409, `Model '${model.name}' got a new checkpoint while importing; retry`, { type: "ConflictError" });
        throw error;
      }
    },
  );
}
