import type { FastifyInstance } from "fastify";
import { installJsonBodyParser } from "../json-body.js";
import { chatCompletionsRoute } from "./completions/route.js";
import { keepExactTopLevelIntegers } from "./common/exact-integers.js";
import { legacyCompletionsRoute } from "./legacy-completions/route.js";
import { loraRoutes } from "./lora/route.js";
import { messagesRoute } from "./messages-api/route.js";
import { responsesRoutes } from "./responses/route.js";
import type { ChatRouting } from "./routing.js";
import { modelListRoute } from "./models/route.js";
import { tokenizeRoutes } from "./tokenize/route.js";

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
