import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { GenerateEvent } from "../../engine/api.js";
import { principalOf } from "../auth.js";
import { ApiError, errorBody } from "../errors.js";
import { defineRoute } from "../routes.js";
import { type PreparedCompletion, prepareCompletion } from "./prepare.js";
import { ChatCompletionReq } from "./request-schema.js";
import { collectCompletion } from "./response.js";
import { SseStream } from "./sse.js";
import { streamCompletion } from "./stream.js";

/**
 * POST /v1/chat/completions (and the trailing-slash form, which the app's router accepts): the
 * whole request is validated and prepared before anything is sent; a streamed response even waits
 * for the engine to start, so an engine that refuses the request still yields a real HTTP error.
 * A client that disconnects aborts its generation.
 */
export async function chatCompletionsRoute(app: FastifyInstance): Promise<void> {
  const { store, blobs, catalog, config } = app.services;
  defineRoute(
    app,
    {
      method: "POST",
      url: "/chat/completions",
      summary: "Create a chat completion (OpenAI/vLLM-compatible; `stream: true` answers with server-sent events)",
      tags: ["chat"],
      body: ChatCompletionReq,
      errorStyle: "openai",
      security: "bearer",
    },
    async ({ body }, request, reply) => {
      const headerRequestId = request.headers["x-request-id"];
      const prepared = await prepareCompletion(body, {
        entity: principalOf(request).entity,
        headerRequestId: typeof headerRequestId === "string" ? headerRequestId : undefined,
        engines: app.services.engines,
        resolver: { db: store.db, blobs, dataDir: config.dataDir, catalog },
      });
      const abort = abortOnDisconnect(reply);
      const events = prepared.engine.generate({ ...prepared.generate, signal: abort.signal });
      if (!prepared.stream) return collectCompletion(events, prepared.plan);
      return sendStream(prepared, await startedEvents(events), request, reply);
    },
  );
}

/** Aborts when the connection closes before the response was fully written. */
function abortOnDisconnect(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller;
}

/** Waits for the engine's first event (errors before it become HTTP errors), then replays it with the rest. */
async function startedEvents(events: AsyncIterable<GenerateEvent>): Promise<AsyncIterable<GenerateEvent>> {
  const iterator = events[Symbol.asyncIterator]();
  const first = await iterator.next();
  return {
    async *[Symbol.asyncIterator]() {
      if (first.done) return;
      yield first.value;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    },
  };
}

function sendStream(prepared: PreparedCompletion, events: AsyncIterable<GenerateEvent>, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const sse = new SseStream();
  void (async () => {
    try {
      await streamCompletion(events, prepared.plan, (chunk) => sse.send(chunk));
    } catch (error) {
      // Headers are gone: a failure mid-stream is an error event, then [DONE] (spec/chat.md §8.5).
      if (!(error instanceof ApiError)) request.log.error({ err: error }, "chat completion stream failed");
      await sse.send(streamErrorBody(error));
    } finally {
      await sse.done();
    }
  })();
  return reply.header("content-type", "text/event-stream; charset=utf-8").header("cache-control", "no-cache").header("x-accel-buffering", "no").send(sse.body);
}

function streamErrorBody(error: unknown): Record<string, unknown> {
  if (error instanceof ApiError) return errorBody("openai", error.status, error.message, error.options);
  return errorBody("openai", 500, "Internal server error", { type: "InternalServerError" });
}
