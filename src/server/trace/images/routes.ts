import type { FastifyInstance } from "fastify";
import { callEnd, callStart } from "../../../trace/evaluations/call-writes.js";
import { TraceBadRequest } from "../../../store/trace/errors.js";
import type { TraceServices } from "../../../trace/services.js";
import { nowTimestamp } from "../../../store/trace/timestamps.js";
import { defineRoute } from "../../routes.js";
import { ImageProvider } from "./image-provider.js";
import { resolveProject, traceUserId } from "../common/project.js";
import { traceRoute, useLosslessJson } from "../common/scope.js";

import { ImageCreateReq, ImageCreateRes } from "./protocol.js";

/** The op Weave's trace server records image generations under (its `IMAGE_GENERATION_CREATE_OP_NAME`). */
export const IMAGE_GENERATION_OP = "weave.image_generation_create";

/**
 * POST /image/create (`docs/api/trace.md#images`): forwards `{model, prompt, n}` to the configured image
 * provider (`FLYWHEEL_IMAGE_UPSTREAM`) and, unless `track_llm_call` is false, records the
 * generation as a call in the project as Weave does. Without a provider a valid request gets a 400
 * that says so (a 5xx would make the SDKs retry for hours).
 */
export async function imageRoutes(app: FastifyInstance, options: { trace: TraceServices }): Promise<void> {
  useLosslessJson(app);
  const config = app.services.config.imageUpstream;
  const provider = config ? new ImageProvider(config) : undefined;
  defineRoute(
    app,
    { method: "POST", url: "/image/create", summary: "Generate an image on the configured upstream image provider", body: ImageCreateReq, response: ImageCreateRes, ...traceRoute("images") },
    async ({ body }, request) => {
      const project = resolveProject(request, body.project_id);
      if (!provider) {
        throw new TraceBadRequest(`Image generation is not available: this server has no upstream image provider configured, so model '${body.inputs.model}' cannot generate images`);
      }
      const { model, prompt, n } = body.inputs;
      const startedAt = nowTimestamp();
      const response = await provider.generate(n == null ? { model, prompt } : { model, prompt, n });
      if (!body.track_llm_call) return { response };

      // Recorded as Weave records it: every input (n null when not given), the provider's answer as
      // the output, its usage under the model's name. A failed generation records nothing.
      const start = callStart({ projectId: project.projectId, opName: IMAGE_GENERATION_OP, inputs: { model, prompt, n: n ?? null }, wbUserId: traceUserId(request), startedAt });
      const usage = response.usage;
      const summary = typeof usage === "object" && usage !== null ? { usage: { [model]: usage } } : {};
      await options.trace.calls.writeCalls([{ start }, { end: callEnd(project.projectId, start.id, { output: response, summary }) }]);
      return { response, weave_call_id: start.id };
    },
  );
}
