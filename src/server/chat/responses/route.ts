import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { deleteResponse, findResponse, saveResponse } from "../../../store/stored-responses.js";
import { principalOf } from "../../auth.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../../routes.js";
import { withChatErrors } from "../common/engine-errors.js";
import type { ChatRouting } from "../routing.js";
import { isTrainedModelName, prepareCompletion } from "../pipeline/prepare.js";
import { requestTokenMetadata, tokenMetadataOf } from "../pipeline/token-metadata.js";
import { chatSizeLimits } from "../pipeline/request-limits.js";
import { prepareContextOf, refuseUpstreamModel } from "../pipeline/request-context.js";
import type { ChatMessageIn } from "../completions/protocol.js";
import { collectCompletion } from "../completions/response.js";
import { streamCompletion } from "../completions/stream.js";
import { abortOnDisconnect, sendEventStream, startedEvents, streamErrorBody } from "../completions/stream-reply.js";
import { ResponseDeletedRes, ResponsesReq, ResponsesRes, type ResponsesResponse, ResponsesStreamEvent } from "./protocol.js";
import { assistantMessage, callId, chatResultOf, outputItems, responseId, responseObject } from "./response.js";
import { ResponsesEventStream } from "./stream.js";
import { toChatRequest } from "./translate.js";

const ResponseIdParams = z.object({ response_id: z.string() });

const notFound = (id: string) => new ApiError(404, `Response with id '${id}' not found.`, { type: "NotFoundError", param: "response_id" });

/**
 * The Responses API on the chat core: POST /v1/responses translates the input (after the stored
 * conversation of `previous_response_id`) into a chat request, runs it as chat runs it, and answers
 * a `response` object or its event stream; with `store` (the default) the response and its
 * conversation are kept, scoped to the caller's entity, for GET/DELETE /v1/responses/{id} and for
 * the next request's `previous_response_id`.
 */
export function responsesRoutes(app: FastifyInstance, routing: ChatRouting): void {
  const { config, store } = app.services;
  defineRoute(
    app,
    {
      method: "POST",
      url: "/responses",
      summary: "Create a model response (OpenAI Responses API; `stream: true` answers with its server-sent events)",
      tags: ["chat"],
      body: ResponsesReq,
      response: ResponsesRes,
      stream: ResponsesStreamEvent,
      errorStyle: "openai",
      security: "bearer",
      ...chatSizeLimits(config),
    },
    async ({ body }, request, reply) => {
      const context = prepareContextOf(app, routing, request);
      await refuseUpstreamModel(routing, body.model, context, "`/v1/responses`");
      let previous: ChatMessageIn[] = [];
      if (body.previous_response_id) {
        const stored = await findResponse(store.db, context.entity, body.previous_response_id);
        if (!stored) throw new ApiError(404, `Previous response with id '${body.previous_response_id}' not found.`, { type: "NotFoundError", param: "previous_response_id" });
        previous = stored.conversation as ChatMessageIn[];
      }
      const { chat, conversation } = toChatRequest(body, previous);
      const withTokens = !body.stream && (body.return_token_ids ?? isTrainedModelName(body.model, context));
      if (withTokens) requestTokenMetadata(chat);
      const abort = abortOnDisconnect(reply);
      const prepared = await prepareCompletion(chat, context);
      prepared.plan.output.newToolCallId = callId;
      const meta = { id: responseId(), createdAt: Math.floor(Date.now() / 1000), model: prepared.plan.model };
      const keep = async (final: ResponsesResponse, assistant: ChatMessageIn) => {
        if (body.store) await saveResponse(store.db, { id: meta.id, entity: context.entity, model: meta.model, conversation: [...conversation, assistant], body: final });
      };
      const events = withChatErrors(prepared.engine.generate({ ...prepared.generate, signal: abort.signal }));
      if (!body.stream) {
        const completion = await collectCompletion(events, prepared.plan);
        const result = chatResultOf(completion);
        const final: ResponsesResponse = { ...responseObject(body, meta, { output: outputItems(result), result }), ...(withTokens ? tokenMetadataOf(completion) : {}) };
        await keep(final, assistantMessage(result));
        return final;
      }
      prepared.plan.streamUsage = { include: true, continuous: false };
      const started = await startedEvents(events);
      return sendEventStream(reply, request.log, {
        produce: async (sse) => {
          const out = new ResponsesEventStream((event) => sse.sendNamed(event.type, event));
          const inProgress = responseObject(body, meta, null);
          await out.event({ type: "response.created", response: inProgress });
          await out.event({ type: "response.in_progress", response: inProgress });
          await streamCompletion(started, prepared.plan, (chunk) => out.push(chunk));
          await out.finish();
          const result = out.result();
          const final = responseObject(body, meta, { output: out.items, result });
          await keep(final, assistantMessage(result));
          await out.event({ type: final.status === "incomplete" ? "response.incomplete" : "response.completed", response: final });
        },
        fail: (sse, error) => {
          const { message, type, param } = streamErrorBody(error).error as { message: string; type: string; param: string | null };
          const event: ResponsesStreamEvent = { type: "error", code: type, message, param };
          return sse.sendNamed(event.type, event);
        },
        finish: (sse) => sse.end(),
      });
    },
  );
  const byId = { tags: ["chat"], params: ResponseIdParams, errorStyle: "openai" as const, security: "bearer" as const };
  defineRoute(app, { method: "GET", url: "/responses/:response_id", summary: "Retrieve a stored response", response: ResponsesRes, ...byId }, async ({ params }, request): Promise<ResponsesResponse> => {
    const stored = await findResponse(store.db, principalOf(request).entity, params.response_id);
    if (!stored) throw notFound(params.response_id);
    // The store keeps the body as JSON; only this route writes it, from a ResponsesResponse.
    return stored.body as ResponsesResponse;
  });
  defineRoute(app, { method: "DELETE", url: "/responses/:response_id", summary: "Delete a stored response", response: ResponseDeletedRes, ...byId }, async ({ params }, request): Promise<z.output<typeof ResponseDeletedRes>> => {
    if (!(await deleteResponse(store.db, principalOf(request).entity, params.response_id))) throw notFound(params.response_id);
    return { id: params.response_id, object: "response", deleted: true };
  });
}
