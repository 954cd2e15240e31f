import type { FastifyInstance } from "fastify";
import { chatCompletionsRoute } from "./completions-route.js";
import { modelListRoute } from "./models-route.js";

/** The OpenAI-compatible surface under /v1. */
export async function chatRoutes(app: FastifyInstance): Promise<void> {
  await app.register(modelListRoute);
  await app.register(chatCompletionsRoute);
}
