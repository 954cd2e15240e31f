import type { FastifyBaseLogger, FastifyReply } from "fastify";
import type { GenerateEvent } from "../../../engine/api.js";
import { ApiError, errorBody } from "../../errors.js";
import type { CompletionPlan } from "../pipeline/completion-plan.js";
import { SseStream } from "../common/sse.js";
import { streamCompletion } from "./stream.js";

/** The HTTP side of a streamed completion: when to send headers, the SSE body, and disconnects. */

/** Aborts when the connection closes before the response was fully written. */
export function abortOnDisconnect(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller;
}

/** Waits for the engine's first event (errors before it become HTTP errors), then replays it with the rest. */
export async function startedEvents(events: AsyncIterable<GenerateEvent>): Promise<AsyncIterable<GenerateEvent>> {
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

/** Answers with the event stream of a completion; failures after the headers become an error event, then `[DONE]`. */
export function sendCompletionStream(reply: FastifyReply, plan: CompletionPlan, events: AsyncIterable<GenerateEvent>, log: FastifyBaseLogger): FastifyReply {
  return sendEventStream(reply, log, {
    produce: (sse) => streamCompletion(events, plan, (chunk) => sse.send(chunk)),
    // Headers are gone: a failure mid-stream is an error event, then [DONE] (docs/api/chat.md#stream-errors).
    fail: (sse, error) => sse.send(streamErrorBody(error)),
    finish: (sse) => sse.done(),
  });
}

/** How one API writes its event stream: the events, a failure after the headers, and the end. */
export interface EventStreamWriter {
  produce: (sse: SseStream) => Promise<void>;
  fail: (sse: SseStream, error: unknown) => Promise<void>;
  finish: (sse: SseStream) => Promise<void> | void;
}

/** Answers with a server-sent event stream written by `writer`; unexpected failures are logged. */
export function sendEventStream(reply: FastifyReply, log: FastifyBaseLogger, writer: EventStreamWriter): FastifyReply {
  const sse = new SseStream();
  void (async () => {
    try {
      await writer.produce(sse);
    } catch (error) {
      if (!(error instanceof ApiError)) log.error({ err: error }, "event stream failed");
      await writer.fail(sse, error);
    } finally {
      await writer.finish(sse);
    }
  })();
  return reply.header("content-type", "text/event-stream; charset=utf-8").header("cache-control", "no-cache").header("x-accel-buffering", "no").send(sse.body);
}

export function streamErrorBody(error: unknown): Record<string, unknown> {
  if (error instanceof ApiError) return errorBody("openai", error.status, error.message, error.options);
  return errorBody("openai", 500, "Internal server error", { type: "InternalServerError" });
}
