import type { FastifyInstance } from "fastify";
import { defineRoute } from "../../routes.js";
import type { ChatRouting } from "../routing.js";
import { chatBodyLimit, checkRequestSize } from "../pipeline/request-limits.js";
import { prepareContextOf, refuseUpstreamModel } from "../pipeline/request-context.js";
import { DetokenizeReq, DetokenizeRes, TokenizeReq, TokenizeRes } from "./protocol.js";
import { detokenize, tokenize } from "./serving.js";

/** POST /tokenize and /detokenize at the server's root, where vLLM serves them; they need the API key like chat. */
export function tokenizeRoutes(app: FastifyInstance, routing: ChatRouting): void {
  const { config } = app.services;
  defineRoute(
    app,
    {
      method: "POST",
      url: "/tokenize",
      summary: "Tokenize a prompt, or chat messages rendered through the model's chat template (vLLM-compatible)",
      tags: ["chat"],
      body: TokenizeReq,
      response: TokenizeRes,
      errorStyle: "openai",
      security: "bearer",
      precheck: (body) => checkRequestSize(body, config.chat),
      bodyLimit: chatBodyLimit(config),
    },
    async ({ body }, request) => {
      const context = prepareContextOf(app, routing, request);
      await refuseUpstreamModel(routing, body.model, context, "`/tokenize`");
      return tokenize(body, context);
    },
  );
  defineRoute(
    app,
    {
      method: "POST",
      url: "/detokenize",
      summary: "Decode token ids to text (vLLM-compatible)",
      tags: ["chat"],
      body: DetokenizeReq,
      response: DetokenizeRes,
      errorStyle: "openai",
      security: "bearer",
      bodyLimit: chatBodyLimit(config),
    },
    async ({ body }, request) => {
      const context = prepareContextOf(app, routing, request);
      await refuseUpstreamModel(routing, body.model, context, "`/detokenize`");
      return detokenize(body, context);
    },
  );
}
