import type { FastifyInstance } from "fastify";
import { defineRoute } from "../../routes.js";
import { completeChat } from "./serving.js";
import { withChatErrors } from "../common/engine-errors.js";
import type { ChatRouting } from "../routing.js";
import { prepareCompletion } from "../pipeline/prepare.js";
import { prepareContextOf } from "../pipeline/request-context.js";
import { chatSizeLimits } from "../pipeline/request-limits.js";
import { ChatCompletionChunk, ChatCompletionReq, ChatCompletionRes } from "./protocol.js";
import { abortOnDisconnect, sendCompletionStream, startedEvents } from "./stream-reply.js";
import { forwardCompletion } from "../upstream/forward.js";

/**
 * POST /v1/chat/completions (and the trailing-slash form, which the app's router accepts): the
 * whole request is validated and prepared before anything is sent; a streamed response even waits
 * for the engine to start, so an engine that refuses the request still yields a real HTTP error.
 * A client that disconnects aborts its generation. Models with an upstream (FLYWHEEL_UPSTREAMS)
 * are forwarded there once the schema accepted the request.
 */
export function chatCompletionsRoute(app: FastifyInstance, routing: ChatRouting): void {
  const { config } = app.services;
  defineRoute(
    app,
    {
      method: "POST",
      url: "/chat/completions",
      summary: "Create a chat completion (OpenAI/vLLM-compatible; `stream: true` answers with server-sent events)",
      tags: ["chat"],
      body: ChatCompletionReq,
      response: ChatCompletionRes,
      stream: ChatCompletionChunk,
      errorStyle: "openai",
      security: "bearer",
      ...chatSizeLimits(config),
    },
    async ({ body }, request, reply) => {
      const context = prepareContextOf(app, routing, request);
      const abort = abortOnDisconnect(reply);
      const upstream = await routing.upstreams.target(body.model, context);
      if (upstream) {
        const options = { signal: abort.signal, requestId: context.headerRequestId, adapters: routing.upstreams.adapters, log: request.log };
        return forwardCompletion(reply, upstream, request.body as Record<string, unknown>, options);
      }
      if (!body.stream) return completeChat(body, context, abort.signal);
      const prepared = await prepareCompletion(body, context);
      const events = withChatErrors(prepared.engine.generate({ ...prepared.generate, signal: abort.signal }));
      return sendCompletionStream(reply, prepared.plan, await startedEvents(events), request.log);
    },
  );
}
