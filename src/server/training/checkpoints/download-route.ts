import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { exportModelInThread, UnsupportedExportError } from "../../../engine/export/export-in-thread.js";
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE } from "../../../engine/lora/files.js";
import { materializeCheckpoint } from "../../../store/checkpoint-files.js";
import { getCheckpointByStep } from "../../../store/checkpoints.js";
import { getModel } from "../../../store/models.js";
import { principalOf } from "../../auth.js";
import { ApiError, notFound } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { tarGzStream } from "./tar.js";

export const CheckpointDownloadParams = z.object({ model_id: z.uuid(), step: z.coerce.number().int().min(0) });
export const CheckpointDownloadQuery = z.object({
  format: z.enum(["peft", "merged", "gguf"]).default("peft").describe("peft: the LoRA adapter (.tar.gz); merged: a Hugging Face model directory with the adapter merged in (.tar.gz); gguf: one GGUF file of the merged model"),
});

/**
 * `GET /v1/preview/models/{model_id}/checkpoints/{step}/download`: a checkpoint as files other
 * tools load, streamed. The PEFT adapter comes straight from the blob store; merged and GGUF
 * exports are written by a worker thread into a temporary directory that is removed once sent.
 */
export async function checkpointDownloadRoute(app: FastifyInstance): Promise<void> {
  const { store, blobs, catalog, config } = app.services;

  defineRoute(
    app,
    {
      method: "GET",
      url: "/preview/models/:model_id/checkpoints/:step/download",
      summary: "Download a checkpoint: its PEFT adapter, the merged model, or a GGUF file",
      tags: ["training"],
      params: CheckpointDownloadParams,
      query: CheckpointDownloadQuery,
      rawResponse: { mediaType: "application/octet-stream", description: "An attachment: peft and merged are .tar.gz archives (application/gzip), gguf one .gguf file" },
      security: "bearer",
    },
    async ({ params, query }, request, reply) => {
      const model = await getModel(store.db, principalOf(request).entity, params.model_id);
      if (!model) throw notFound(`Model '${params.model_id}' not found`);
      const checkpoint = await getCheckpointByStep(store.db, model.id, params.step);
      // Step 0 exists before any training: the base weights (ART reads it the same way).
      if (!checkpoint && params.step !== 0) throw notFound(`Model '${model.name}' has no checkpoint at step ${params.step}`);
      const adapterDir = checkpoint ? await materializeCheckpoint(blobs, config.dataDir, checkpoint) : null;
      const stem = `${model.name}-step${params.step}`;

      if (query.format === "peft") {
        if (!adapterDir) throw notFound(`Step ${params.step} of model '${model.name}' is the base model '${model.base_model}' without an adapter; download it with format=merged or format=gguf`);
        const entries = [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE].map((name) => ({ name: `${stem}/${name}`, source: { file: path.join(adapterDir, name) } }));
        return sendAttachment(reply, tarGzStream(entries), `${stem}.tar.gz`, "application/gzip");
      }

      const base = catalog.get(model.base_model);
      if (!base) throw new ApiError(409, `The base model '${model.base_model}' of model '${model.name}' is not served here, so its weights cannot be merged`);
      const workDir = path.join(config.dataDir, "exports", `.tmp-${randomUUID()}`);
      fs.mkdirSync(workDir, { recursive: true });
      const cleanUp = () => fs.rmSync(workDir, { recursive: true, force: true });
      try {
        const name = `${model.project}/${model.name}:step${params.step}`;
        if (query.format === "merged") {
          const out = path.join(workDir, `${stem}-merged`);
          const { files } = await exportModelInThread({ format: "merged", baseDir: base.dir, adapter: adapterDir, out, name });
          const entries = files.map((file) => ({ name: `${stem}-merged/${file}`, source: { file: path.join(out, file) } }));
          return sendAttachment(reply, tarGzStream(entries), `${stem}-merged.tar.gz`, "application/gzip", cleanUp);
        }
        const out = path.join(workDir, `${stem}.gguf`);
        await exportModelInThread({ format: "gguf", baseDir: base.dir, adapter: adapterDir, out, name });
        reply.header("content-length", fs.statSync(out).size);
        return sendAttachment(reply, fs.createReadStream(out), `${stem}.gguf`, "application/octet-stream", cleanUp);
      } catch (error) {
        cleanUp();
        if (error instanceof UnsupportedExportError) throw new ApiError(409, `Step ${params.step} of model '${model.name}' cannot be exported as ${query.format}: ${error.message}`);
        throw error;
      }
    },
  );
}

/** Streams `body` as a file download; `done` runs once the stream closes, sent or not. */
function sendAttachment(reply: FastifyReply, body: Readable, fileName: string, contentType: string, done?: () => void): FastifyReply {
  if (done) body.once("close", done);
  reply.header("content-type", contentType);
  reply.header("content-disposition", `attachment; filename="${fileName}"`);
  return reply.send(body);
}
