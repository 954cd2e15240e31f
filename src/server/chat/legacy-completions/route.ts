import type { FastifyInstance } from "fastify";
import { defineRoute } from "../../routes.js";
import { withChatErrors } from "../common/engine-errors.js";
import type { ChatRouting } from "../routing.js";
import { chatBodyLimit } from "../pipeline/request-limits.js";
import { prepareContextOf, refuseUpstreamModel } from "../pipeline/request-context.js";
import { abortOnDisconnect, sendEventStream, startedEvents, streamErrorBody } from "../completions/stream-reply.js";
import { prepareLegacyCompletion } from "./prepare.js";
import { CompletionChunk, CompletionReq, CompletionRes } from "./protocol.js";
import { collectLegacyCompletion, streamLegacyCompletion } from "./response.js";

/**
 * POST /v1/completions (vLLM's legacy completions): validated and prepared whole before anything
 * is sent; a stream waits for every prompt's generation to start, so a refusal is a real HTTP
 * error; a disconnect aborts every generation.
 */
export function legacyCompletionsRoute(app: FastifyInstance, routing: ChatRouting): void {
  const { config } = app.services;
  defineRoute(
    app,
    {
      method: "POST",
      url: "/completions",
      summary: "Create a text completion from a raw prompt (vLLM-compatible legacy completions; `stream: true` answers with server-sent events)",
      tags: ["chat"],
      body: CompletionReq,
      response: CompletionRes,
      stream: CompletionChunk,
      errorStyle: "openai",
      security: "bearer",
      bodyLimit: chatBodyLimit(config),
    },
    async ({ body }, request, reply) => {
      const context = prepareContextOf(app, routing, request);
      await refuseUpstreamModel(routing, body.model, context, "`/v1/completions`");
      const abort = abortOnDisconnect(reply);
      const prepared = await prepareLegacyCompletion(body, context);
      const generations = prepared.generates.map((generate) => withChatErrors(prepared.engine.generate({ ...generate, signal: abort.signal })));
      if (!body.stream) {
        // One prompt failing stops the others' generations too.
        return collectLegacyCompletion(generations, prepared.plan).catch((error: unknown) => {
          abort.abort();
          throw error;
        });
      }
      const started = await Promise.all(generations.map((events) => startedEvents(events)));
      return sendEventStream(reply, request.log, {
        produce: (sse) => streamLegacyCompletion(started, prepared.plan, (chunk) => sse.send(chunk)),
        fail: (sse, error) => sse.send(streamErrorBody(error)),
        finish: (sse) => sse.done(),
      });
    },
  );
}
