import type { FastifyInstance } from "fastify";
import type { Config } from "../../config.js";
import { installJsonBodyParser } from "../json-body.js";
import { chatCompletionsRoute } from "./completions-route.js";
import { keepExactTopLevelIntegers } from "./exact-integers.js";
import { legacyCompletionsRoute } from "./legacy-completions/route.js";
import { loraRoutes } from "./lora-routes.js";
import { messagesRoute } from "./messages-api/route.js";
import { responsesRoutes } from "./responses/route.js";
import { modelListRoute } from "./models-route.js";
import { RuntimeAdapters } from "./runtime-adapters.js";
import { tokenizeRoutes } from "./tokenize/route.js";
import { UpstreamRouter } from "./upstream/upstream-router.js";

/** What decides where a chat request runs, beyond the served base models and the trained-model registry. */
export interface ChatRouting {
  /** Adapters loaded through /v1/load_lora_adapter. */
  runtimeAdapters: RuntimeAdapters;
  /** Base models whose inference an upstream server does (FLYWHEEL_UPSTREAMS). */
  upstreams: UpstreamRouter;
}

export function createChatRouting(config: Config): ChatRouting {
  return { runtimeAdapters: new RuntimeAdapters(), upstreams: new UpstreamRouter(config.upstreams) };
}

/** The OpenAI-compatible surface under /v1 (and the Anthropic-compatible Messages API beside it). */
export async function chatRoutes(app: FastifyInstance, options: { routing: ChatRouting }): Promise<void> {
  installJsonBodyParser(app, { refine: keepExactTopLevelIntegers });
  const { routing } = options;
  modelListRoute(app, routing);
  chatCompletionsRoute(app, routing);
  legacyCompletionsRoute(app, routing);
  messagesRoute(app, routing);
  responsesRoutes(app, routing);
  loraRoutes(app, routing.runtimeAdapters);
}

/** vLLM's /tokenize and /detokenize, at the server's root. */
export async function rootChatRoutes(app: FastifyInstance, options: { routing: ChatRouting }): Promise<void> {
  tokenizeRoutes(app, options.routing);
}
