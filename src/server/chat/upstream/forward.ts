import type { FastifyBaseLogger, FastifyReply } from "fastify";
import type { AdapterRef } from "../../../engine/api.js";
import { ApiError, errorBody } from "../../errors.js";
import { SseStream } from "../common/sse.js";
import type { UpstreamAdapters } from "./upstream-adapters.js";
import { type UpstreamClient, upstreamError } from "./upstream-client.js";

/** Where a request goes upstream: the model name there, and the name the caller used. */
export interface UpstreamTarget {
  client: UpstreamClient;
  /** `model` as the upstream knows it: its base model name or a loaded adapter's name. */
  model: string;
  /** `model` in responses: what the caller asked for. */
  responseModel: string;
  /** A trained-model name: logprobs with token ids by default, as on the built-in engine. */
  trained: boolean;
  adapter?: AdapterRef;
}

export interface ForwardOptions {
  signal: AbortSignal;
  requestId: string | undefined;
  adapters: UpstreamAdapters;
  log: FastifyBaseLogger;
}

/**
 * Sends the caller's (schema-valid) request body upstream under the upstream's model name and
 * answers with the upstream's answer, `model` written back to the caller's name in the body or in
 * every streamed chunk. An adapter the upstream forgot (it restarted) is loaded again once.
 */
export async function forwardCompletion(reply: FastifyReply, target: UpstreamTarget, rawBody: Record<string, unknown>, options: ForwardOptions): Promise<unknown> {
  const body: Record<string, unknown> = { ...rawBody, model: target.model };
  if (target.trained) {
    body.logprobs ??= true;
    body.return_tokens_as_token_ids ??= true;
  }
  let response = await target.client.chat(body, options.signal, options.requestId);
  if (response.status === 404 && target.adapter) {
    await response.body?.cancel();
    options.adapters.forget(target.client, target.adapter);
    await options.adapters.ensure(target.client, target.adapter);
    response = await target.client.chat(body, options.signal, options.requestId);
  }
  if (!response.ok) throw await upstreamError(response, target.client.config);
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const completion = (await response.json()) as Record<string, unknown>;
    if ("model" in completion) completion.model = target.responseModel;
    return completion;
  }
  return sendForwardedStream(reply, response, target, options.log);
}

/** Relays the upstream's server-sent events one by one; a broken upstream stream ends with an error event. */
function sendForwardedStream(reply: FastifyReply, response: Response, target: UpstreamTarget, log: FastifyBaseLogger): FastifyReply {
  const sse = new SseStream();
  void (async () => {
    try {
      for await (const data of sseData(response.body!)) {
        if (data === "[DONE]") break;
        const chunk = JSON.parse(data) as Record<string, unknown>;
        if ("model" in chunk) chunk.model = target.responseModel;
        await sse.send(chunk);
        if (!sse.open) {
          await response.body!.cancel();
          return;
        }
      }
    } catch (error) {
      log.warn({ err: error, upstream: target.client.config.baseUrl }, "upstream stream failed");
      const message = `The upstream inference server for \`${target.client.config.modelId}\` broke off the stream: ${(error as Error).message}`;
      await sse.send(errorBody("openai", 502, message, { type: "BadGatewayError" }));
    } finally {
      await sse.done();
    }
  })();
  return reply.header("content-type", "text/event-stream; charset=utf-8").header("cache-control", "no-cache").header("x-accel-buffering", "no").send(sse.body);
}

/** The `data:` payloads of an event stream, in order. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body as AsyncIterable<Uint8Array>) {
    buffer = (buffer + decoder.decode(bytes, { stream: true })).replaceAll("\r\n", "\n");
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).replace(/^ /, ""))
        .join("\n");
      if (data !== "") yield data;
    }
  }
  if (buffer.trim() !== "") throw new ApiError(502, "the stream ended in the middle of an event");
}
