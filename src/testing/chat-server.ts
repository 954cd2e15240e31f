import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import type { LocalEngine } from "../engine/runtime/local-engine.js";
import type { DialectName } from "../store/db.js";
import { startTestApp, type TestApp, type TestAppOptions } from "./app.js";

/**
 * A listening test server with real engines, the official OpenAI SDK pointed at it, and a raw
 * server-sent-events reader for the checks the SDK hides (framing, `[DONE]`, omitted keys).
 */

/** A request body: the SDK's fields plus vLLM's extensions, which the SDK passes through. */
export type ChatParams = ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;

export interface LogprobOut {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

export interface ToolCallOut {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A non-streaming response with vLLM's extra fields. */
export interface Completion {
  id: string;
  object: string;
  created: number;
  model: string;
  system_fingerprint: string;
  choices: {
    index: number;
    message: { role: string; content: string | null; reasoning: string | null; tool_calls?: ToolCallOut[] };
    logprobs: { content: LogprobOut[] } | null;
    finish_reason: string;
    stop_reason: number | string | null;
    token_ids: number[] | null;
  }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details: { cached_tokens: number } };
  prompt_token_ids: number[] | null;
  prompt_logprobs: (Record<string, { logprob: number; rank: number; decoded_token: string }> | null)[] | null;
  kv_transfer_params: unknown;
}

/** One streamed chunk with vLLM's extra fields. */
export interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  system_fingerprint?: string;
  prompt_token_ids?: number[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
  choices: {
    index: number;
    delta: { role?: string; content?: string; reasoning?: string; tool_calls?: { index: number; id?: string; type?: string; function: { name?: string; arguments?: string } }[] };
    logprobs: { content: LogprobOut[] } | null;
    finish_reason: string | null;
    stop_reason?: number | string | null;
    token_ids?: number[];
  }[];
}

/** An SSE `data:` payload: a chunk, an error event, or the final `[DONE]`. */
export type SseEvent = Chunk | { error: { message: string; type: string; param: string | null; code: number } } | "[DONE]";

export interface ChatServer {
  app: TestApp;
  client: OpenAI;
  /** `http://127.0.0.1:<port>/v1` */
  baseURL: string;
  /** A non-streaming completion through the SDK, typed with vLLM's fields. */
  create(params: ChatParams, options?: OpenAI.RequestOptions): Promise<Completion>;
  /** POSTs a chat completion with fetch (Alice's key); the caller reads the response. */
  post(body: Record<string, unknown>, init?: { headers?: Record<string, string>; signal?: AbortSignal }): Promise<Response>;
  /** The engine thread's host for a served base model. */
  engine(baseModelId: string): Promise<LocalEngine>;
  close(): Promise<void>;
}

export async function startChatServer(dialect: DialectName, options: TestAppOptions): Promise<ChatServer> {
  const app = await startTestApp(dialect, options);
  const address = await app.app.listen({ port: 0, host: "127.0.0.1" });
  const baseURL = `${address}/v1`;
  const client = new OpenAI({ baseURL, apiKey: app.keys.alice, maxRetries: 0 });
  return {
    app,
    client,
    baseURL,
    create: async (params, requestOptions) => (await client.chat.completions.create(params, requestOptions)) as unknown as Completion,
    post: (body, init = {}) =>
      fetch(`${baseURL}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${app.keys.alice}`, "content-type": "application/json", ...init.headers },
        body: JSON.stringify(body),
        ...(init.signal ? { signal: init.signal } : {}),
      }),
    engine: async (baseModelId) => {
      if (!app.engines) throw new Error("the test app serves no models");
      return (await app.engines.get(baseModelId)) as LocalEngine;
    },
    close: async () => {
      // fetch opens a spare connection after an aborted one; it never sends a request, so closing
      // would wait for the server's headers timeout. Nothing is in flight when a test file ends.
      app.app.server.closeAllConnections();
      await app.close();
    },
  };
}

/**
 * The `data:` payloads of an event-stream response, as they arrive; asserts the framing vLLM uses
 * (`data: <json>\n\n`, nothing else).
 */
export async function* sseEvents(response: Response): AsyncGenerator<SseEvent> {
  if (!response.body) throw new Error("response has no body");
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(bytes, { stream: true });
    for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (!frame.startsWith("data: ") || frame.includes("\n")) throw new Error(`unexpected SSE frame: ${JSON.stringify(frame)}`);
      const data = frame.slice("data: ".length);
      yield data === "[DONE]" ? "[DONE]" : (JSON.parse(data) as SseEvent);
    }
  }
  if (buffered !== "") throw new Error(`stream ended inside a frame: ${JSON.stringify(buffered)}`);
}

/** Every event of a stream. */
export async function readSse(response: Response): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of sseEvents(response)) events.push(event);
  return events;
}

/** The chunks of a stream's events (neither errors nor `[DONE]`). */
export function chunksOf(events: readonly SseEvent[]): Chunk[] {
  return events.filter((event): event is Chunk => event !== "[DONE]" && !("error" in event));
}
