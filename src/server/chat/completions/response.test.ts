import { describe, expect, it } from "vitest";
import type { GenerateEvent } from "../../../engine/api.js";
import { ByteTokenizer } from "../../../testing/byte-tokenizer.js";
import { eventStream, sampledTokens, testPlan } from "../../../testing/chat.js";
import type { CompletionPlan } from "../pipeline/completion-plan.js";
import { LogprobFormatter } from "../pipeline/logprobs.js";
import { ChatCompletionRes } from "./protocol.js";
import { collectCompletion, EngineOutputError } from "./response.js";

const tokenizer = new ByteTokenizer();
const eos = tokenizer.eosTokenId;

function started(promptTokenIds = [1, 2, 3], cachedTokens = 0): GenerateEvent {
  return { type: "started", promptTokenIds, cachedTokens, promptLogprobs: null };
}

function output(index: number, text: string): GenerateEvent {
  return { type: "output", index, tokens: sampledTokens(tokenizer, text), text };
}

describe("non-streaming response", () => {
  it("has every field of docs/api/chat.md#response in vLLM's shape", async () => {
    const response = await collectCompletion(
      eventStream([started([5, 6, 7, 8], 2), output(0, "hello"), { type: "output", index: 0, tokens: [{ tokenId: eos, logprob: -0.1 }], text: "" }, { type: "finished", index: 0, finishReason: "stop", stopReason: null }]),
      testPlan(tokenizer),
    );
    expect(response).toEqual({
      id: "chatcmpl-test",
      object: "chat.completion",
      created: 1700000000,
      model: "test/base",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "hello", refusal: null, annotations: null, audio: null, function_call: null, reasoning: null },
          logprobs: null,
          finish_reason: "stop",
          stop_reason: null,
          token_ids: null,
        },
      ],
      service_tier: null,
      system_fingerprint: "flywheel-test-00000000",
      usage: { prompt_tokens: 4, total_tokens: 4 + 2, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 2 } },
      prompt_logprobs: null,
      prompt_token_ids: null,
      kv_transfer_params: null,
    });
  });

  it("returns token ids, logprobs and prompt logprobs when asked", async () => {
    const plan = testPlan(tokenizer, { logprobs: true, returnTokenIds: true, promptLogprobs: true, formatter: new LogprobFormatter(tokenizer, { asTokenIds: true, topCount: 1 }) });
    const tokens = [
      {
        tokenId: tokenizer.tokenId("hello")!,
        logprob: -0.5,
        top: [
          { tokenId: tokenizer.tokenId("hello")!, logprob: -0.5 },
          { tokenId: 104, logprob: -2 },
        ],
      },
      { tokenId: eos, logprob: -Infinity, top: [] },
    ];
    const response = (await collectCompletion(
      eventStream([
        { type: "started", promptTokenIds: [104, 105], cachedTokens: 0, promptLogprobs: [null, { actual: { tokenId: 105, logprob: -3, rank: 4 }, top: [{ tokenId: 104, logprob: -1, rank: 1 }] }] },
        { type: "output", index: 0, tokens, text: "hello" },
        { type: "finished", index: 0, finishReason: "stop", stopReason: eos },
      ]),
      plan,
    )) as { choices: Record<string, unknown>[]; prompt_token_ids: number[]; prompt_logprobs: unknown };
    const helloId = tokenizer.tokenId("hello")!;
    expect(response.choices[0]!.token_ids).toEqual([helloId, eos]);
    expect(response.choices[0]!.stop_reason).toBe(eos);
    expect(response.choices[0]!.logprobs).toEqual({
      content: [
        { token: `token_id:${helloId}`, logprob: -0.5, bytes: [104, 101, 108, 108, 111], top_logprobs: [{ token: `token_id:${helloId}`, logprob: -0.5, bytes: [104, 101, 108, 108, 111] }] },
        { token: `token_id:${eos}`, logprob: -9999, bytes: [...Buffer.from("<|endoftext|>")], top_logprobs: [] },
      ],
    });
    expect(response.prompt_token_ids).toEqual([104, 105]);
    expect(response.prompt_logprobs).toEqual([null, { "105": { logprob: -3, rank: 4, decoded_token: "i" }, "104": { logprob: -1, rank: 1, decoded_token: "h" } }]);
  });

  it("writes a token's true bytes and its decoded text, special tokens literally", () => {
    const formatter = new LogprobFormatter(tokenizer, { asTokenIds: false, topCount: 5 });
    const euro = tokenizer.encode("€");
    expect(euro).toHaveLength(1);
    const [entry] = formatter.entries([{ tokenId: euro[0]!, logprob: -1, top: [] }]);
    expect(entry).toEqual({ token: "€", logprob: -1, bytes: [0xe2, 0x82, 0xac], top_logprobs: [] });
    // A lone byte of a multi-byte character: the text shows U+FFFD, the bytes stay exact.
    const [partial] = formatter.entries([{ tokenId: 0xe2, logprob: -1 }]);
    expect(partial).toMatchObject({ token: "\uFFFD", bytes: [0xe2] });
    const [special] = formatter.entries([{ tokenId: eos, logprob: -1 }]);
    expect(special!.token).toBe("<|endoftext|>");
  });

  it("orders n choices by index, sums their tokens and echoes the last message", async () => {
    const response = (await collectCompletion(
      eventStream([started(), output(1, "b"), output(0, "aa"), { type: "finished", index: 1, finishReason: "length", stopReason: null }, { type: "finished", index: 0, finishReason: "stop", stopReason: "END" }]),
      testPlan(tokenizer, { n: 2, echo: "Once upon " }),
    )) as { choices: { message: { content: string }; finish_reason: string; stop_reason: unknown }[]; usage: { completion_tokens: number } };
    expect(response.choices.map((choice) => [choice.message.content, choice.finish_reason, choice.stop_reason])).toEqual([
      ["Once upon aa", "stop", "END"],
      ["Once upon b", "length", null],
    ]);
    expect(response.usage.completion_tokens).toBe(3);
  });

  it("parses tool calls and reasoning into the message", async () => {
    const text = '<think>need weather</think><tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>';
    const response = (await collectCompletion(
      eventStream([started(), output(0, text), { type: "finished", index: 0, finishReason: "stop", stopReason: null }]),
      testPlan(tokenizer, { output: { ...testPlan(tokenizer).output, reasoning: "undecided", toolChoice: { kind: "auto" } } }),
    )) as { choices: { message: Record<string, unknown>; finish_reason: string }[] };
    expect(response.choices[0]!.message).toMatchObject({
      content: null,
      reasoning: "need weather",
      tool_calls: [{ id: "chatcmpl-tool-0", type: "function", function: { name: "get_weather", arguments: '{"city": "Oslo"}' } }],
    });
    expect(response.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("withholds logprobs and token ids when reasoning is hidden", async () => {
    const response = (await collectCompletion(
      eventStream([started(), output(0, "<think>x</think>y"), { type: "finished", index: 0, finishReason: "stop", stopReason: null }]),
      testPlan(tokenizer, { logprobs: true, returnTokenIds: true, hideTokenMetadata: true, output: { ...testPlan(tokenizer).output, reasoning: "undecided", includeReasoning: false } }),
    )) as { choices: Record<string, unknown>[] };
    expect(response.choices[0]).toMatchObject({ logprobs: null, token_ids: null, message: { content: "y", reasoning: null } });
  });

  it("is exactly what the protocol's response schema (the one /openapi.json shows) describes", async () => {
    const finish = (index: number, stopReason: number | string | null = null): GenerateEvent => ({ type: "finished", index, finishReason: "stop", stopReason });
    const withMetadata = testPlan(tokenizer, { logprobs: true, returnTokenIds: true, promptLogprobs: true, formatter: new LogprobFormatter(tokenizer, { asTokenIds: false, topCount: 1 }) });
    const toolsAndReasoning = testPlan(tokenizer, { n: 2, echo: "Once ", output: { ...testPlan(tokenizer).output, reasoning: "undecided", toolChoice: { kind: "auto" } } });
    const cases: [GenerateEvent[], CompletionPlan][] = [
      [[started(), output(0, "hello"), finish(0)], testPlan(tokenizer)],
      [
        [
          { type: "started", promptTokenIds: [104, 105], cachedTokens: 1, promptLogprobs: [null, { actual: { tokenId: 105, logprob: -3, rank: 4 }, top: [{ tokenId: 104, logprob: -1, rank: 1 }] }] },
          { type: "output", index: 0, tokens: [{ tokenId: 104, logprob: -0.5, top: [{ tokenId: 104, logprob: -0.5 }] }], text: "h" },
          finish(0, eos),
        ],
        withMetadata,
      ],
      [[started(), output(0, '<think>a</think><tool_call>{"name": "f", "arguments": {}}</tool_call>'), output(1, "b"), finish(1, "END"), finish(0)], toolsAndReasoning],
    ];
    for (const [events, plan] of cases) {
      const response = JSON.parse(JSON.stringify(await collectCompletion(eventStream(events), plan)));
      // Parsing drops fields the schema does not name, so equality also finds undocumented fields.
      expect(ChatCompletionRes.parse(response)).toEqual(response);
    }
  });

  it("fails when the engine never starts", async () => {
    await expect(collectCompletion(eventStream([]), testPlan(tokenizer))).rejects.toThrow(EngineOutputError);
  });
});
