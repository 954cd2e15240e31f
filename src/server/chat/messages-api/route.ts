import type { FastifyInstance } from "fastify";
import { ApiError, errorBody } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { withChatErrors } from "../common/engine-errors.js";
import type { ChatRouting } from "../routing.js";
import { isTrainedModelName, prepareCompletion } from "../pipeline/prepare.js";
import { requestTokenMetadata, tokenMetadataOf } from "../pipeline/token-metadata.js";
import { chatSizeLimits } from "../pipeline/request-limits.js";
import { prepareContextOf, refuseUpstreamModel } from "../pipeline/request-context.js";
import { collectCompletion } from "../completions/response.js";
import { streamCompletion } from "../completions/stream.js";
import { abortOnDisconnect, sendEventStream, startedEvents } from "../completions/stream-reply.js";
import { MessagesReq, MessagesRes, type MessagesResponse, MessagesStreamEvent } from "./protocol.js";
import { anthropicMessage, messageId, toolUseId } from "./response.js";
import { AnthropicEventStream } from "./stream.js";
import { toChatRequest } from "./translate.js";

/**
 * POST /v1/messages, Anthropic's Messages API on the chat core: the request is translated into a
 * chat completion request, prepared and run as chat runs it (same models, trained checkpoints,
 * sampling, template, tool parsing), and the result written in Anthropic's shapes and errors.
 */
export function messagesRoute(app: FastifyInstance, routing: ChatRouting): void {
  const { config } = app.services;
  defineRoute(
    app,
    {
      method: "POST",
      url: "/messages",
      summary: "Create a message (Anthropic Messages API; `stream: true` answers with Anthropic's server-sent events)",
      tags: ["chat"],
      body: MessagesReq,
      response: MessagesRes,
      stream: MessagesStreamEvent,
      errorStyle: "anthropic",
      security: "bearer",
      ...chatSizeLimits(config),
    },
    async ({ body }, request, reply) => {
      const context = prepareContextOf(app, routing, request);
      await refuseUpstreamModel(routing, body.model, context, "`/v1/messages`");
      const chat = toChatRequest(body);
      const withTokens = !body.stream && (body.return_token_ids ?? isTrainedModelName(body.model, context));
      if (withTokens) requestTokenMetadata(chat);
      const stopSequences = body.stop_sequences ?? [];
      const id = messageId();
      const abort = abortOnDisconnect(reply);
      const prepared = await prepareCompletion(chat, context);
      prepared.plan.output.newToolCallId = toolUseId;
      const events = withChatErrors(prepared.engine.generate({ ...prepared.generate, signal: abort.signal }));
      if (!body.stream) {
        const completion = await collectCompletion(events, prepared.plan);
        const message: MessagesResponse = { ...anthropicMessage(completion, id, stopSequences), ...(withTokens ? tokenMetadataOf(completion) : {}) };
        return message;
      }
      prepared.plan.streamUsage = { include: true, continuous: true };
      const started = await startedEvents(events);
      return sendEventStream(reply, request.log, {
        produce: async (sse) => {
          const out = new AnthropicEventStream((event) => sse.sendNamed(event.type, event), { id, model: prepared.plan.model, stopSequences });
          await streamCompletion(started, prepared.plan, (chunk) => out.push(chunk));
          await out.finish();
        },
        fail: (sse, error) => {
          const status = error instanceof ApiError ? error.status : 500;
          const message = error instanceof ApiError ? error.message : "Internal server error";
          return sse.sendNamed("error", errorBody("anthropic", status, message));
        },
        finish: (sse) => sse.end(),
      });
    },
  );
}
