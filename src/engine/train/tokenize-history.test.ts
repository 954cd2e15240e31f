import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { chatmlTemplate } from "../../testing/chatml.js";
import type { ChatTemplateDeps, RenderChat } from "./chat-render.js";
import { TrainingInputError } from "./errors.js";
import { pickSentinel, tokenizeHistory } from "./tokenize-history.js";
import type { ChatMessage, ChoiceJson, HistoryJson } from "./trajectory.js";

const tokenizer = new ByteTokenizer();
const template = chatmlTemplate();
const deps: ChatTemplateDeps = { tokenizer, render: template.render, chatTemplate: template.source };
const imEnd = tokenizer.tokenId("<|im_end|>")!;
const enc = (text: string) => tokenizer.encode(text);
const bytesOf = (text: string) => [...new TextEncoder().encode(text)];

/** A Choice as the chat endpoint returns it for a trained model: token ids as `token_id:<N>` strings. */
function choice(content: string, ids: number[], logprobs = ids.map((_, i) => -0.1 * (i + 1)), message: Partial<ChoiceJson["message"]> = {}): ChoiceJson {
  return {
    finish_reason: "stop",
    index: 0,
    message: { role: "assistant", content, tool_calls: null, ...message },
    logprobs: { content: ids.map((id, i) => ({ token: `token_id:${id}`, logprob: logprobs[i]!, bytes: [...tokenizer.tokenBytes(id)], top_logprobs: [] })), refusal: null },
  };
}

describe("tokenizeHistory", () => {
  it("trains an exchange's reported ids as they are, even past the tokenizer's vocabulary (the model's LM head can be larger)", () => {
    const beyond = tokenizer.vocabSize + 3;
    const sampled: ChoiceJson = { finish_reason: "length", index: 0, message: { role: "assistant", content: "" }, token_ids: [65, beyond], logprobs: null };
    const history: HistoryJson = { messages_and_choices: [{ role: "user", content: "Q" }, sampled], exchange: { prompt_token_ids: [1, 2, 3] } };
    const tokenized = tokenizeHistory(history, deps, true, ["trajectory"])!;
    expect(tokenized.tokenIds).toEqual([1, 2, 3, 65, beyond]);
    expect(tokenized.assistantMask).toEqual([0, 0, 0, 1, 1]);
  });

  it("splices each Choice's sampled tokens into the rendered conversation, without the template's duplicate end token", () => {
    // "hello" would re-tokenize as one piece; the sampler produced it byte by byte, and that is what must be trained.
    const first = [...bytesOf("hello"), imEnd];
    const second = [...bytesOf("ok"), imEnd];
    const history: HistoryJson = {
      messages_and_choices: [
        { role: "system", content: "S" },
        { role: "user", content: "Q" },
        choice("hello", first, [-0.5, -0.4, -0.3, -0.2, -0.1, -0.05]),
        { role: "user", content: "Q2" },
        choice("ok", second, [-1, -2, -3]),
        { role: "user", content: "dropped: after the last trainable turn" },
      ],
    };
    const result = tokenizeHistory(history, deps, false, [])!;
    const head = enc("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n");
    const middle = enc("\n<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n");
    expect(result.tokenIds).toEqual([...head, ...first, ...middle, ...second]);
    expect(result.assistantMask).toEqual([...head.map(() => 0), ...first.map(() => 1), ...middle.map(() => 0), ...second.map(() => 1)]);
    expect(result.logprobs).toEqual([...head.map(() => NaN), -0.5, -0.4, -0.3, -0.2, -0.1, -0.05, ...middle.map(() => NaN), -1, -2, -3]);
  });

  it("is null for a history with nothing trainable", () => {
    const history: HistoryJson = {
      messages_and_choices: [
        { role: "user", content: "Q" },
        { role: "assistant", content: "A" },
        { ...choice("x", bytesOf("x")), logprobs: null },
      ],
    };
    expect(tokenizeHistory(history, deps, false, [])).toBeNull();
  });

  it("prefers vLLM's token_ids, then token_id strings, then looks token strings up (unknown → EOS)", () => {
    const prompt = enc("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n");
    const withIds = { ...choice("ab", bytesOf("ab")), token_ids: [tokenizer.tokenId("he")!, tokenizer.tokenId("ll")!] };
    expect(tokenizeHistory({ messages_and_choices: [{ role: "user", content: "Q" }, withIds] }, deps, false, [])!.tokenIds).toEqual([...prompt, tokenizer.tokenId("he"), tokenizer.tokenId("ll")]);

    const byString = choice("x", [0, 0]);
    byString.logprobs!.content = [
      { token: "hello", logprob: -1 },
      { token: "no-such-token", logprob: -2 },
    ];
    const result = tokenizeHistory({ messages_and_choices: [{ role: "user", content: "Q" }, byString] }, deps, false, [])!;
    expect(result.tokenIds).toEqual([...prompt, tokenizer.tokenId("hello"), tokenizer.eosTokenId]);
    expect(result.logprobs.slice(-2)).toEqual([-1, -2]);
  });

  it("uses the refusal logprobs when there is no content", () => {
    const refusal = choice("", []);
    refusal.logprobs = { content: [], refusal: [{ token: `token_id:${bytesOf("n")[0]}`, logprob: -0.7 }] };
    const result = tokenizeHistory({ messages_and_choices: [{ role: "user", content: "Q" }, refusal] }, deps, false, [])!;
    expect(result.tokenIds.at(-1)).toBe(bytesOf("n")[0]);
    expect(result.logprobs.at(-1)).toBe(-0.7);
  });

  it("trains plain assistant messages re-tokenized, with no logprobs, only when allowed", () => {
    const history: HistoryJson = {
      messages_and_choices: [
        { role: "user", content: "Q" },
        { role: "assistant", content: "hello" },
      ],
    };
    expect(tokenizeHistory(history, deps, false, [])).toBeNull();
    const result = tokenizeHistory(history, deps, true, [])!;
    expect(result.tokenIds).toEqual(enc("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nhello"));
    expect(result.assistantMask.slice(-1)).toEqual([1]);
    expect(result.logprobs.at(-1)).toBeNaN();
    const withCalls: ChatMessage = { role: "assistant", content: "", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] };
    expect(() => tokenizeHistory({ messages_and_choices: [{ role: "user", content: "Q" }, withCalls] }, deps, true, ["h"])).toThrow(TrainingInputError);
  });

  it("drops the template's empty think block when the sampler produced its own (Qwen3)", () => {
    const thinkTokenizer = new ByteTokenizer(["<think>", "</think>", "\n\n"]);
    const thinking = chatmlTemplate({ thinking: true });
    const thinkDeps: ChatTemplateDeps = { tokenizer: thinkTokenizer, render: thinking.render, chatTemplate: thinking.source };
    const sampled = [thinkTokenizer.tokenId("<think>")!, ...bytesOf("hm"), thinkTokenizer.tokenId("</think>")!, ...bytesOf("ok")];
    const sampledChoice: ChoiceJson = {
      message: { role: "assistant", content: "ok" },
      logprobs: { content: sampled.map((id) => ({ token: `token_id:${id}`, logprob: -0.5, bytes: [...thinkTokenizer.tokenBytes(id)] })) },
    };
    const result = tokenizeHistory({ messages_and_choices: [{ role: "user", content: "Q" }, sampledChoice] }, thinkDeps, false, [])!;
    // enable_thinking defaults to false for this template, so it renders an empty block; the sampled one replaces it.
    expect(result.tokenIds).toEqual([...thinkTokenizer.encode("<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n"), ...sampled]);
  });

  it("keeps earlier turns' tool calls in the template, renders the final one as text, and passes normalised tools", () => {
    let seenTools: unknown;
    const render: RenderChat = (messages, tools, options) => {
      seenTools = tools;
      return template.render(messages, tools, options);
    };
    const call = { id: "c1", type: "function", function: { name: "f", arguments: '{"x": 1}' } };
    const first = [...bytesOf("T"), imEnd];
    const history: HistoryJson = {
      tools: [{ name: "f", parameters: {} }],
      messages_and_choices: [{ role: "user", content: "Q" }, choice("T", first, undefined, { tool_calls: [call] }), { role: "tool", content: "1" }, choice("done", bytesOf("ok"), undefined, { tool_calls: [call] })],
    };
    const result = tokenizeHistory(history, { ...deps, render }, false, [])!;
    expect(seenTools).toEqual([{ type: "function", function: { name: "f", parameters: {} } }]);
    const text = tokenizer.decode(result.tokenIds);
    expect(
      text.endsWith('<|im_start|>assistant\nT<|im_end|>\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n1\n</tool_response><|im_end|>\n<|im_start|>assistant\nok'),
    ).toBe(true);
  });

  it("decodes tool-call arguments for templates that iterate them", () => {
    const itemsTemplate = chatmlTemplate({ toolArgumentItems: true });
    let seen: ChatMessage[] = [];
    const render: RenderChat = (messages, tools, options) => {
      seen = messages;
      return itemsTemplate.render(messages, tools, options);
    };
    const call = { id: "c1", type: "function", function: { name: "f", arguments: '{"x": 1}' } };
    const history: HistoryJson = { messages_and_choices: [{ role: "user", content: "Q" }, { role: "assistant", content: "", tool_calls: [call] }, { role: "tool", content: "1" }, choice("ok", bytesOf("ok"))] };
    tokenizeHistory(history, { tokenizer, render, chatTemplate: itemsTemplate.source }, false, []);
    expect(seen[1]!.tool_calls![0]!.function.arguments).toEqual({ x: 1 });
    const bad = { ...history, messages_and_choices: [{ role: "user", content: "Q" }, { role: "assistant", content: "", tool_calls: [{ ...call, function: { name: "f", arguments: "not json" } }] }, choice("ok", bytesOf("ok"))] };
    expect(() => tokenizeHistory(bad, { tokenizer, render, chatTemplate: itemsTemplate.source }, false, ["h"])).toThrow(/h\.messages_and_choices\.1\.message\.tool_calls\.0\.function\.arguments/);
  });

  it("fails clearly when the template does not reproduce an assistant turn", () => {
    const forgetful: RenderChat = (messages, tools, options) =>
      template.render(
        messages.map((m) => (m.role === "assistant" ? { ...m, content: "" } : m)),
        tools,
        options,
      );
    expect(() => tokenizeHistory({ messages_and_choices: [{ role: "user", content: "Q" }, choice("ok", bytesOf("ok"))] }, { ...deps, render: forgetful }, false, ["g", 0])).toThrow(
      /g\.0\.messages_and_choices\.1: the chat template did not reproduce/,
    );
  });

  it("rejects malformed items with their location", () => {
    expect(() => tokenizeHistory({ messages_and_choices: [{ content: "no role" } as never] }, deps, false, ["t"])).toThrow(/t\.messages_and_choices\.0/);
    const broken = choice("x", bytesOf("x"));
    broken.logprobs!.content![0]!.logprob = "bad" as never;
    expect(() => tokenizeHistory({ messages_and_choices: [broken] }, deps, false, ["t"])).toThrow(/t\.messages_and_choices\.0\.logprobs\.content\.0\.logprob/);
  });
});

describe("pickSentinel", () => {
  it("takes the largest ordinary token absent from the rendering that survives a round trip", () => {
    const euro = tokenizer.encode("€")[0]!;
    expect(pickSentinel(tokenizer, [], [])).toBe(euro);
    expect(pickSentinel(tokenizer, [euro], [])).toBe(tokenizer.encode("é")[0]);
  });
});
