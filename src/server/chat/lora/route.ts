import type { FastifyInstance } from "fastify";
import { principalOf } from "../../auth.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { LoadLoraReq, LORA_ANSWER, UnloadLoraReq } from "./protocol.js";
import type { RuntimeAdapters } from "./runtime-adapters.js";

/**
 * vLLM's dynamic LoRA endpoints (`POST /v1/load_lora_adapter`, `/v1/unload_lora_adapter`), with
 * vLLM's plain-text success bodies and message texts. Off unless FLYWHEEL_ALLOW_RUNTIME_LORA=1
 * (vLLM's VLLM_ALLOW_RUNTIME_LORA_UPDATING): they read directories of the server's file system.
 */
export function loraRoutes(app: FastifyInstance, adapters: RuntimeAdapters): void {
  const { catalog, config } = app.services;
  const requireEnabled = () => {
    if (!config.allowRuntimeLora) throw new ApiError(404, "Loading LoRA adapters at run time is off on this server; start it with FLYWHEEL_ALLOW_RUNTIME_LORA=1.", { type: "NotFoundError" });
  };

  defineRoute(
    app,
    {
      method: "POST",
      url: "/load_lora_adapter",
      summary: "Load a PEFT LoRA adapter from a directory and serve it as `lora_name` (vLLM)",
      tags: ["chat"],
      body: LoadLoraReq,
      rawResponse: LORA_ANSWER,
      errorStyle: "openai",
      security: "bearer",
    },
    async ({ body }, request, reply) => {
      requireEnabled();
      adapters.load(principalOf(request).entity, body.lora_name, body.lora_path, catalog, body.load_inplace);
      return reply.type("text/plain; charset=utf-8").send(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
    },
  );

  defineRoute(
    app,
    { method: "POST", url: "/unload_lora_adapter", summary: "Stop serving a LoRA adapter loaded at run time (vLLM)", tags: ["chat"], body: UnloadLoraReq, rawResponse: LORA_ANSWER, errorStyle: "openai", security: "bearer" },
    async ({ body }, request, reply) => {
      requireEnabled();
      adapters.unload(principalOf(request).entity, body.lora_name);
      return reply.type("text/plain; charset=utf-8").send(`Success: LoRA adapter '${body.lora_name}' removed successfully.`);
    },
  );
}
