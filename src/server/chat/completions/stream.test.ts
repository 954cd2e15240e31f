import { describe, expect, it } from "vitest";
import type { GenerateEvent } from "../../../engine/api.js";
import { ByteTokenizer } from "../../../testing/byte-tokenizer.js";
import { eventStream, sampledTokens, testPlan } from "../../../testing/chat.js";
import type { CompletionPlan } from "../pipeline/completion-plan.js";
import { ChatCompletionChunk } from "./protocol.js";
import { EngineOutputError } from "./response.js";
import { SseStream } from "../common/sse.js";
import { streamCompletion } from "./stream.js";

const tokenizer = new ByteTokenizer();

const started: GenerateEvent = { type: "started", promptTokenIds: [1, 2, 3], cachedTokens: 1, promptLogprobs: null };
const output = (index: number, text: string): GenerateEvent => ({ type: "output", index, tokens: sampledTokens(tokenizer, text), text });
const finished = (index: number, finishReason: "stop" | "length" = "stop", stopReason: number | string | null = null): GenerateEvent => ({ type: "finished", index, finishReason, stopReason });

async function chunksOf(events: GenerateEvent[], plan: CompletionPlan) {
  const chunks: Record<string, unknown>[] = [];
  await streamCompletion(eventStream(events), plan, async (chunk) => {
    const sent = JSON.parse(JSON.stringify(chunk));
    // Every chunk is what the protocol's chunk schema describes, no field more or less.
    expect(ChatCompletionChunk.parse(sent)).toEqual(sent);
    chunks.push(sent);
  });
  return chunks;
}

const choicesOf = (chunks: Record<string, unknown>[]) => chunks.map((chunk) => (chunk.choices as unknown[])[0]);

describe("streamed response", () => {
  it("sends a role chunk, deltas and one finish chunk, all sharing id and created", async () => {
    const chunks = await chunksOf([started, output(0, "hel"), output(0, "lo"), finished(0)], testPlan(tokenizer));
    expect(chunks[0]).toEqual({
      id: "chatcmpl-test",
      object: "chat.completion.chunk",
      created: 1700000000,
      model: "test/base",
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
    });
    expect(choicesOf(chunks).slice(1)).toEqual([
      { index: 0, delta: { content: "hel" }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: "lo" }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: "stop", stop_reason: null },
    ]);
    expect(chunks[3]!.system_fingerprint).toBe("flywheel-test-00000000");
    expect(chunks.every((chunk) => chunk.id === "chatcmpl-test" && chunk.created === 1700000000 && !("usage" in chunk))).toBe(true);
  });

  it("adds the usage chunk, and running usage on every chunk with continuous_usage_stats", async () => {
    const chunks = await chunksOf([started, output(0, "ab"), finished(0, "length")], testPlan(tokenizer, { streamUsage: { include: true, continuous: true } }));
    expect(chunks.map((chunk) => chunk.usage)).toEqual([
      { prompt_tokens: 3, total_tokens: 3, completion_tokens: 0 },
      { prompt_tokens: 3, total_tokens: 5, completion_tokens: 2 },
      { prompt_tokens: 3, total_tokens: 5, completion_tokens: 2 },
      { prompt_tokens: 3, total_tokens: 5, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 1 } },
    ]);
    expect(chunks[3]).toMatchObject({ choices: [], system_fingerprint: "flywheel-test-00000000" });
    expect(chunks[2]).not.toHaveProperty("system_fingerprint");
    const usageOnly = await chunksOf([started, output(0, "ab"), finished(0)], testPlan(tokenizer, { streamUsage: { include: true, continuous: false } }));
    expect(usageOnly.filter((chunk) => "usage" in chunk)).toHaveLength(1);
  });

  it("streams n choices interleaved, each with its own role and finish chunk", async () => {
    const chunks = await chunksOf([started, output(1, "x"), output(0, "y"), finished(1), output(0, "z"), finished(0, "length")], testPlan(tokenizer, { n: 2 }));
    const byIndex = (index: number) => choicesOf(chunks).filter((choice) => (choice as { index: number }).index === index);
    for (const index of [0, 1]) {
      const choices = byIndex(index) as { delta: Record<string, unknown>; finish_reason: string | null }[];
      expect(choices[0]!.delta).toEqual({ role: "assistant", content: "" });
      expect(choices.filter((choice) => choice.finish_reason !== null)).toHaveLength(1);
    }
    expect((byIndex(0) as { delta: { content?: string } }[]).map((choice) => choice.delta.content ?? "").join("")).toBe("yz");
  });

  it("puts prompt token ids in the first chunk only and token ids in every delta", async () => {
    const plan = testPlan(tokenizer, { n: 2, returnTokenIds: true, logprobs: true });
    const chunks = await chunksOf([started, output(0, "ab"), finished(0), output(1, "c"), finished(1)], plan);
    expect(chunks.filter((chunk) => "prompt_token_ids" in chunk).map((chunk) => chunk.prompt_token_ids)).toEqual([[1, 2, 3]]);
    expect(chunks[0]).toHaveProperty("prompt_token_ids");
    const deltas = choicesOf(chunks).filter((choice) => (choice as { token_ids?: number[] }).token_ids !== undefined) as { index: number; token_ids: number[]; logprobs: unknown }[];
    expect(deltas.filter((choice) => choice.index === 0).flatMap((choice) => choice.token_ids)).toEqual(tokenizer.encode("ab"));
    expect(deltas.find((choice) => choice.token_ids.length > 0)!.logprobs).toEqual({
      content: [
        { token: "a", logprob: -0.25, bytes: [97], top_logprobs: [] },
        { token: "b", logprob: -0.25, bytes: [98], top_logprobs: [] },
      ],
    });
  });

  it("sends an echo chunk after the role chunk", async () => {
    const chunks = await chunksOf([started, output(0, "more"), finished(0)], testPlan(tokenizer, { echo: "Once" }));
    expect(choicesOf(chunks)[1]).toEqual({ index: 0, delta: { content: "Once" }, logprobs: null, finish_reason: null });
  });

  it("streams tool calls and ends with finish_reason tool_calls; holds partial tags without dropping token ids", async () => {
    const plan = testPlan(tokenizer, { returnTokenIds: true, output: { ...testPlan(tokenizer).output, toolChoice: { kind: "auto" } } });
    const chunks = await chunksOf([started, output(0, "Hi <tool"), output(0, '_call>{"name": "f", "arguments": {"a": 1}}'), output(0, "</tool_call>"), finished(0)], plan);
    const choices = choicesOf(chunks) as { delta: Record<string, unknown>; finish_reason: string | null }[];
    expect(choices[1]!.delta).toEqual({ content: "Hi " });
    expect(choices[2]!.delta).toEqual({
      tool_calls: [
        { index: 0, id: "chatcmpl-tool-0", type: "function", function: { name: "f", arguments: "" } },
        { index: 0, function: { arguments: '{"a": 1}' } },
      ],
    });
    expect(choices[3]!.delta).toEqual({});
    expect(choices.at(-1)!.finish_reason).toBe("tool_calls");
  });

  it("splits reasoning deltas from content deltas", async () => {
    const plan = testPlan(tokenizer, { output: { ...testPlan(tokenizer).output, reasoning: "reasoning" } });
    const chunks = await chunksOf([started, output(0, "plan"), output(0, "</think>ans"), output(0, "wer"), finished(0)], plan);
    expect(
      choicesOf(chunks)
        .slice(1, 4)
        .map((choice) => (choice as { delta: unknown }).delta),
    ).toEqual([{ reasoning: "plan" }, { content: "ans" }, { content: "wer" }]);
  });

  it("fails when the engine never starts, and finishes choices the engine left open", async () => {
    await expect(chunksOf([], testPlan(tokenizer))).rejects.toThrow(EngineOutputError);
    const chunks = await chunksOf([started, output(0, "a")], testPlan(tokenizer));
    expect(choicesOf(chunks).at(-1)).toMatchObject({ finish_reason: "abort" });
  });
});

describe("SSE framing", () => {
  it("frames events as data lines and ends with [DONE]", async () => {
    const sse = new SseStream();
    const received: Buffer[] = [];
    sse.body.on("data", (part: Buffer) => received.push(part));
    await sse.send({ a: 1, b: "é" });
    await sse.done();
    await new Promise((resolve) => sse.body.once("end", resolve));
    expect(Buffer.concat(received).toString()).toBe('data: {"a":1,"b":"é"}\n\ndata: [DONE]\n\n');
    expect(sse.open).toBe(false);
  });

  it("stops writing once the client is gone", async () => {
    const sse = new SseStream();
    sse.body.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    await sse.send({ a: 1 });
    await sse.done();
    expect(sse.open).toBe(false);
  });
});
