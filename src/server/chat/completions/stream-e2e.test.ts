import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineStats } from "../../../engine/runtime/engine-core.js";
import { type ChatParams, type ChatServer, type Chunk, type Completion, chunksOf, readSse, type SseEvent, sseEvents, startChatServer } from "../../../testing/chat-server.js";
import { tinyModel } from "../../../testing/models.js";
import { testDialects } from "../../../testing/stores.js";

/** Polls the engine until it holds no request; returns its stats then. */
async function whenIdle(stats: () => Promise<EngineStats>): Promise<EngineStats> {
  for (;;) {
    const now = await stats();
    if (now.runningRequests === 0 && now.waitingRequests === 0) return now;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Streaming and the request lifecycle end to end (`docs/api/chat.md#streaming`, `docs/api/chat.md#transport`,
 * `docs/api/chat.md#extensions`): the chunk sequence through the OpenAI SDK and raw SSE, usage chunks, a
 * failure mid-stream (the engine thread really terminated), a client that disconnects (its generation
 * cancelled, seen in the engine's stats), response ids, kv_transfer_params and prefix-cache reuse.
 */
describe.each(testDialects)("chat completion streams and lifecycle end to end (%s)", (dialect) => {
  const model = tinyModel("qwen2");
  let server: ChatServer;

  const params = (fields: Record<string, unknown> = {}): ChatParams => ({
    model: "test/tiny",
    messages: [{ role: "user", content: "Stream me something." }],
    temperature: 0,
    repetition_penalty: 1,
    max_completion_tokens: 6,
    ignore_eos: true,
    ...fields,
  });

  beforeAll(async () => {
    server = await startChatServer(dialect, { servedModels: { "test/tiny": model.dir } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("streams through the SDK: a role chunk, deltas and one finish chunk per choice, then usage — the same output as a whole response", async () => {
    const fields = params({ n: 2, temperature: 1, seed: 9, logprobs: true, top_logprobs: 1, return_token_ids: true });
    const whole = await server.create(fields);
    const stream = await server.client.chat.completions.create({ ...fields, stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } } as unknown as OpenAI.ChatCompletionCreateParamsStreaming);
    const chunks: Chunk[] = [];
    for await (const chunk of stream) chunks.push(chunk as unknown as Chunk);

    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks[0]!.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(new Set(chunks.map((chunk) => chunk.created)).size).toBe(1);
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk" && chunk.model === "test/tiny")).toBe(true);
    expect(chunks[0]!.prompt_token_ids).toEqual(whole.prompt_token_ids);
    expect(chunks.slice(1).every((chunk) => chunk.prompt_token_ids === undefined)).toBe(true);

    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    const { prompt_tokens, completion_tokens, total_tokens } = whole.usage;
    expect(usageChunk.usage).toMatchObject({ prompt_tokens, completion_tokens, total_tokens });
    expect(completion_tokens).toBe(12);
    for (const index of [0, 1]) {
      const own = chunks.filter((chunk) => chunk.choices[0]?.index === index);
      expect(own[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
      expect(own.filter((chunk) => chunk.choices[0]!.finish_reason !== null)).toEqual([own.at(-1)]);
      expect(own.at(-1)!.choices[0]).toMatchObject({ finish_reason: "length", stop_reason: null });
      const choice = whole.choices[index]!;
      expect(own.map((chunk) => chunk.choices[0]!.delta.content ?? "").join("")).toBe(choice.message.content);
      expect(own.flatMap((chunk) => chunk.choices[0]!.token_ids ?? [])).toEqual(choice.token_ids);
      expect(own.flatMap((chunk) => chunk.choices[0]!.logprobs?.content ?? [])).toEqual(choice.logprobs!.content);
      // Continuous usage: every chunk of the choice carries its running totals.
      const running = own.map((chunk) => chunk.usage!.completion_tokens);
      expect(running[0]).toBe(0);
      expect(running.at(-1)).toBe(6);
      expect(running).toEqual([...running].sort((a, b) => a - b));
      expect(own.every((chunk) => chunk.usage!.prompt_tokens === whole.usage.prompt_tokens)).toBe(true);
    }
  });

  it("frames events as vLLM does: data lines, [DONE] last, usage keys only when asked for", async () => {
    const plainEvents = await readSse(await server.post({ ...params(), stream: true }));
    expect(plainEvents.at(-1)).toBe("[DONE]");
    const plain = chunksOf(plainEvents);
    expect(plain).toHaveLength(plainEvents.length - 1);
    expect(plain.every((chunk) => !("usage" in chunk))).toBe(true);
    expect(plain.at(-1)!.system_fingerprint).toMatch(/^flywheel-/);
    expect(plain.every((chunk) => !("token_ids" in chunk.choices[0]!))).toBe(true);

    const usage = chunksOf(await readSse(await server.post({ ...params(), stream: true, stream_options: { include_usage: true } })));
    expect(usage.filter((chunk) => "usage" in chunk)).toEqual([usage.at(-1)]);
    expect(usage.at(-1)!.usage).toMatchObject({ completion_tokens: 6 });
    expect(usage.at(-2)!.system_fingerprint).toBeUndefined();
  });

  it("sends a failure mid-stream as an error event followed by [DONE], and serves the next request on a new engine thread", async () => {
    const engine = await server.engine("test/tiny");
    const response = await server.post({ ...params({ max_completion_tokens: 1500 }), stream: true });
    expect(response.status).toBe(200);
    const events: SseEvent[] = [];
    for await (const event of sseEvents(response)) {
      events.push(event);
      if (event !== "[DONE]" && !("error" in event) && event.choices[0]?.delta.content !== undefined && events.length === 2) await engine.terminateThread();
    }
    expect(events.at(-1)).toBe("[DONE]");
    const failure = events.at(-2) as { error: { message: string; type: string; code: number } };
    expect(failure.error).toMatchObject({ type: "ServiceUnavailableError", code: 503, message: expect.stringContaining("stopped") });
    expect(chunksOf(events).some((chunk) => chunk.choices[0]?.finish_reason)).toBe(false);

    // The SDK surfaces the same event as an APIError.
    const stream = await server.client.chat.completions.create({ ...params({ max_completion_tokens: 1500 }), stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    const consume = (async () => {
      let chunks = 0;
      for await (const _ of stream) if (++chunks === 2) await engine.terminateThread();
    })();
    await expect(consume).rejects.toBeInstanceOf(OpenAI.APIError);
    const after = await server.create(params());
    expect(after.choices[0]!.finish_reason).toBe("length");
  });

  it("cancels the generation of a client that disconnects, streaming or not", async () => {
    const engine = await server.engine("test/tiny");
    const maxTokens = 1500;
    const before = await whenIdle(() => engine.stats());
    const controller = new AbortController();
    const response = await server.post({ ...params({ max_completion_tokens: maxTokens }), stream: true }, { signal: controller.signal });
    let received = 0;
    await expect(
      (async () => {
        for await (const event of sseEvents(response)) if (event !== "[DONE]" && ++received === 3) controller.abort();
      })(),
    ).rejects.toThrow();
    const afterStream = await whenIdle(() => engine.stats());
    // The request left the engine long before it could have generated its tokens.
    expect(afterStream.steps - before.steps).toBeLessThan(maxTokens);

    const whole = new AbortController();
    const pending = server.post(params({ max_completion_tokens: maxTokens }), { signal: whole.signal });
    for (let stats = await engine.stats(); stats.runningRequests === 0; stats = await engine.stats()) await new Promise((resolve) => setTimeout(resolve, 5));
    whole.abort();
    await expect(pending).rejects.toThrow();
    const afterWhole = await whenIdle(() => engine.stats());
    expect(afterWhole.steps - afterStream.steps).toBeLessThan(maxTokens);
  });

  it("names completions after X-Request-Id, else request_id, else a random id", async () => {
    const header = await server.create(params({ request_id: "body-id" }), { headers: { "X-Request-Id": "header-id" } });
    expect(header.id).toBe("chatcmpl-header-id");
    const body = await server.create(params({ request_id: "body-id" }));
    expect(body.id).toBe("chatcmpl-body-id");
    const random = [await server.create(params()), await server.create(params())].map((completion) => completion.id);
    expect(random[0]).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(random[0]).not.toBe(random[1]);
    // Reusing an id is fine, also concurrently.
    const concurrent = await Promise.all([1, 2].map(() => server.create(params({ request_id: "same" }))));
    expect(concurrent.map((completion) => completion.id)).toEqual(["chatcmpl-same", "chatcmpl-same"]);
    const streamed = chunksOf(await readSse(await server.post({ ...params({ request_id: "body-id" }), stream: true }, { headers: { "x-request-id": "stream-id" } })));
    expect(new Set(streamed.map((chunk) => chunk.id))).toEqual(new Set(["chatcmpl-stream-id"]));
  });

  it("answers on the trailing-slash path too, ignoring unknown fields", async () => {
    const response = await fetch(`${server.baseURL}/chat/completions/`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.app.keys.alice}`, "content-type": "application/json" },
      body: JSON.stringify({ ...params(), guided_json: { type: "object" }, metadata: { a: "b" }, store: true, some_future_field: [1, 2] }),
    });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as Completion;
    expect(completion.choices[0]!.message.content).toBe((await server.create(params())).choices[0]!.message.content);
    // Inert fields of the interface are accepted without changing the output; wrong types are schema failures.
    const inert = await server.create(params({ user: "u-1", mm_processor_kwargs: { size: 4 }, engine_xargs: { a: [1, "b"] }, vllm_xargs: { c: 2 } }));
    expect(inert.choices[0]!.message.content).toBe(completion.choices[0]!.message.content);
    const wrong = await server.post({ ...params(), engine_xargs: { a: { nested: true } } });
    expect(wrong.status).toBe(422);
    expect(((await wrong.json()) as { detail: { loc: unknown[] }[] }).detail[0]!.loc.slice(0, 2)).toEqual(["body", "engine_xargs"]);
  });

  it("accepts kv_transfer_params and answers null: no KV connector serves this engine", async () => {
    const completion = await server.create(params({ kv_transfer_params: { do_remote_decode: true, remote_engine_id: null } }));
    expect(completion.kv_transfer_params).toBeNull();
    expect(completion.choices[0]!.finish_reason).toBe("length");
  });

  it("reports prefix reuse as cached_tokens, within one cache_salt only", async () => {
    const salted = (salt: string) => params({ cache_salt: salt, messages: [{ role: "user", content: `A prompt to reuse, salted ${salt.length}.` }] });
    const first = await server.create(salted("salt-a"));
    expect(first.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const second = await server.create(salted("salt-a"));
    expect(second.usage.prompt_tokens_details.cached_tokens).toBe(second.usage.prompt_tokens - 1);
    const other = await server.create(salted("salt-b"));
    expect(other.usage.prompt_tokens_details.cached_tokens).toBe(0);
    expect(other.choices[0]!.message.content).toBe(first.choices[0]!.message.content);
    const streamed = chunksOf(await readSse(await server.post({ ...salted("salt-a"), stream: true, stream_options: { include_usage: true } })));
    expect(streamed.at(-1)!.usage!.prompt_tokens_details).toEqual({ cached_tokens: second.usage.prompt_tokens - 1 });
  });
});

/**
 * `priority` (docs/api/chat.md#priority): refused on a model without the priority scheduler,
 * and on one with it (FLYWHEEL_PRIORITY_MODELS), waiting requests are admitted lowest value first.
 * With one sequence at a time, the order in which requests finish is the order they were admitted.
 */
describe.each(testDialects)("chat completion priority end to end (%s)", (dialect) => {
  const model = tinyModel("qwen2");
  let server: ChatServer;

  beforeAll(async () => {
    server = await startChatServer(dialect, {
      servedModels: { "test/prio": model.dir, "test/fcfs": model.dir },
      env: { FLYWHEEL_PRIORITY_MODELS: "test/prio", FLYWHEEL_MAX_NUM_SEQS: "1" },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const params = (modelId: string, fields: Record<string, unknown> = {}): ChatParams => ({
    model: modelId,
    messages: [{ role: "user", content: "Wait your turn." }],
    temperature: 0,
    max_completion_tokens: 3,
    ignore_eos: true,
    ...fields,
  });

  it("refuses a non-zero priority on a model without priority scheduling", async () => {
    await expect(server.client.chat.completions.create(params("test/fcfs", { priority: -1 }))).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("Got priority -1 but Priority scheduling is not enabled."),
    });
    expect((await server.create(params("test/fcfs", { priority: 0 }))).choices).toHaveLength(1);
  });

  it("admits waiting requests lowest priority first, in arrival order among equals", async () => {
    const engine = await server.engine("test/prio");
    const blocker = new AbortController();
    const running = await server.post({ ...params("test/prio", { max_completion_tokens: 2000 }), stream: true }, { signal: blocker.signal });
    const events = sseEvents(running);
    await events.next();

    const finished: string[] = [];
    const waiting: Promise<void>[] = [];
    const arrivals: [string, number][] = [
      ["late", 5],
      ["first", -3],
      ["middle", 2],
      ["second", -3],
    ];
    // One at a time, each queued before the next is sent, so the arrival order is known.
    for (const [name, priority] of arrivals) {
      waiting.push(server.create(params("test/prio", { priority, request_id: name })).then(() => void finished.push(name)));
      const queued = waiting.length;
      for (let stats = await engine.stats(); stats.waitingRequests < queued; stats = await engine.stats()) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    blocker.abort();
    await events.return(undefined).catch(() => undefined);
    await Promise.all(waiting);
    expect(finished).toEqual(["first", "second", "middle", "late"]);
  });
});
