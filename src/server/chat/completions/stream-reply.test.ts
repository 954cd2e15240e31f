import http from "node:http";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { GenerateEvent } from "../../../engine/api.js";
import { ByteTokenizer } from "../../../testing/byte-tokenizer.js";
import { eventStream, sampledTokens, testPlan } from "../../../testing/chat.js";
import { ApiError } from "../../errors.js";
import { abortOnDisconnect, sendCompletionStream, startedEvents } from "./stream-reply.js";

/**
 * The SSE transport of the chat route on a real HTTP server, fed by scripted event sources: when
 * headers go out, how failures after them look on the wire, and that a client hanging up aborts
 * generation.
 */
const tokenizer = new ByteTokenizer();
const started: GenerateEvent = { type: "started", promptTokenIds: [1, 2], cachedTokens: 0, promptLogprobs: null };
const output = (text: string): GenerateEvent => ({ type: "output", index: 0, tokens: sampledTokens(tokenizer, text), text });

function sseEvents(body: string): string[] {
  return body
    .split("\n\n")
    .filter((part) => part !== "")
    .map((part) => {
      expect(part.startsWith("data: ")).toBe(true);
      return part.slice("data: ".length);
    });
}

describe("streamed replies", () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function serve(source: (signal: AbortSignal) => AsyncIterable<GenerateEvent>): Promise<FastifyInstance> {
    app = Fastify();
    app.post("/stream", async (request, reply) => {
      const abort = abortOnDisconnect(reply);
      return sendCompletionStream(reply, testPlan(tokenizer), await startedEvents(source(abort.signal)), request.log);
    });
    await app.ready();
    return app;
  }

  it("frames chunks as SSE and ends with [DONE]", async () => {
    const server = await serve(() => eventStream([started, output("hi"), { type: "finished", index: 0, finishReason: "stop", stopReason: null }]));
    const res = await server.inject({ method: "POST", url: "/stream" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    const events = sseEvents(res.body);
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.slice(0, -1).map((event) => JSON.parse(event).choices[0].delta)).toEqual([{ role: "assistant", content: "" }, { content: "hi" }, {}]);
  });

  it("turns a failure mid-stream into one error event followed by [DONE]", async () => {
    const server = await serve(async function* () {
      yield started;
      yield output("partial");
      throw new Error("kernel exploded at /secret/path.ts:12");
    });
    const events = sseEvents((await server.inject({ method: "POST", url: "/stream" })).body);
    expect(events.slice(-2)).toEqual([JSON.stringify({ error: { message: "Internal server error", type: "InternalServerError", param: null, code: 500 } }), "[DONE]"]);
    const apiFailure = await serve(async function* () {
      yield started;
      throw new ApiError(400, "grammar rejected", { type: "BadRequestError" });
    });
    expect(sseEvents((await apiFailure.inject({ method: "POST", url: "/stream" })).body).at(-2)).toBe(JSON.stringify({ error: { message: "grammar rejected", type: "BadRequestError", param: null, code: 400 } }));
  });

  it("lets an engine failure before its first event surface as an HTTP error", async () => {
    // biome-ignore lint/correctness/useYield: an engine stream that fails before its first event
    const failing = async function* (): AsyncIterable<GenerateEvent> {
      throw new ApiError(400, "refused at admission");
    };
    await expect(startedEvents(failing())).rejects.toThrow("refused at admission");
    const replay: GenerateEvent[] = [];
    for await (const event of await startedEvents(eventStream([started, output("a")]))) replay.push(event);
    expect(replay).toHaveLength(2);
  });

  it("aborts generation when the client disconnects", async () => {
    let aborted: () => void = () => {};
    const abortedPromise = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    const server = await serve(async function* (signal) {
      signal.addEventListener("abort", () => aborted());
      yield started;
      while (!signal.aborted) {
        yield output("tick ");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      yield { type: "finished", index: 0, finishReason: "abort", stopReason: null };
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
    const { port } = server.server.address() as { port: number };
    // A client that reads the first chunk, then hangs up.
    const request = http.request({ host: "127.0.0.1", port, path: "/stream", method: "POST" });
    request.end();
    const response = await new Promise<http.IncomingMessage>((resolve) => request.once("response", resolve));
    const first = await new Promise<Buffer>((resolve) => response.once("data", resolve));
    expect(first.toString()).toContain('"role":"assistant"');
    request.destroy();
    await abortedPromise;
  });
});
