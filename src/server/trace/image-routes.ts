import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { TraceBadRequest } from "../../store/trace/errors.js";
import { defineRoute } from "../routes.js";
import { ProjectId } from "./schemas.js";
import { traceRoute, useLosslessJson } from "./scope.js";
import { resolveProject } from "./project.js";

const ImageCreateReq = z.object({
  project_id: ProjectId,
  inputs: z.object({ model: z.string(), prompt: z.string(), n: z.number().int().min(1).nullish() }),
  track_llm_call: z.boolean().default(true),
});

/**
 * POST /image/create (`spec/trace.md` §4.13). W&B proxies it to an image provider; this server has
 * no image model and no upstream image provider, so a valid request gets a 400 that says so (a 5xx
 * would make the SDKs retry for hours).
 */
export async function imageRoutes(app: FastifyInstance): Promise<void> {
  useLosslessJson(app);
  defineRoute(app, { method: "POST", url: "/image/create", summary: "Generate an image (needs an upstream image provider)", body: ImageCreateReq, ...traceRoute("images") }, async ({ body }, request) => {
    resolveProject(request, body.project_id);
    throw new TraceBadRequest(
      `Image generation is not available: this server has no upstream image provider configured, so model '${body.inputs.model}' cannot generate images`,
    );
  });
}
