import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GenerateEvent } from "../../../engine/api.js";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { defaultSamplingParams, type SamplingParams } from "../../../engine/sampling/params.js";
import { type ChatParams, type ChatServer, type Completion, chunksOf, readSse, startChatServer } from "../../../testing/chat-server.js";
import { choiceIds } from "../../../testing/engine.js";
import { tinyModel } from "../../../testing/models.js";
import { testDialects } from "../../../testing/stores.js";

/**
 * The sampling fields of a chat completion, end to end: the official OpenAI SDK against a real
 * server whose engine thread runs a small random model. A random model's text means nothing, so
 * each test derives what it expects from a plain greedy run, steers with logit_bias where it needs
 * a particular token, and compares with the engine driven directly where the numbers must agree.
 */
describe.each(testDialects)("chat completion sampling fields end to end (%s)", (dialect) => {
  const model = tinyModel("qwen2");
  const eos = model.tokenIds["<|im_end|>"]!;
  const endOfText = model.tokenIds["<|endoftext|>"]!;
  let server: ChatServer;
  let tokenizer: Tokenizer;
  let greedy: Completion;

  const params = (fields: Record<string, unknown> = {}): ChatParams => ({
    model: "test/tiny",
    messages: [{ role: "user", content: "Tell me a story." }],
    temperature: 0,
    // The fixture's generation_config.json defaults to 1.05, which the engine-direct references leave out.
    repetition_penalty: 1,
    max_completion_tokens: 12,
    ignore_eos: true,
    return_token_ids: true,
    ...fields,
  });
  const tokensOf = (completion: Completion, index = 0) => completion.choices[index]!.token_ids!;

  /** The engine run directly on token ids, as the reference for what HTTP returns. */
  async function direct(promptTokenIds: number[], overrides: Partial<SamplingParams>): Promise<GenerateEvent[]> {
    const engine = await server.engine("test/tiny");
    const events: GenerateEvent[] = [];
    const request = { requestId: `direct-${Math.random()}`, promptTokenIds, params: defaultSamplingParams(overrides), cacheSalt: "direct" };
    for await (const event of engine.generate(request)) events.push(event);
    return events;
  }

  /** A generated token (after the first two) whose text is a plain ASCII word, for stop strings and bad words. */
  function wordToken(ids: number[]): { index: number; id: number; text: string } {
    for (let index = 2; index < ids.length; index++) {
      const text = tokenizer.decode([ids[index]!]);
      if (/^[a-z]{2,}$/i.test(text) && tokenizer.encode(text).length === 1 && ids.indexOf(ids[index]!) === index) return { index, id: ids[index]!, text };
    }
    throw new Error(`no plain word token in ${JSON.stringify(ids)}`);
  }

  beforeAll(async () => {
    server = await startChatServer(dialect, { servedModels: { "test/tiny": model.dir } });
    tokenizer = (await server.engine("test/tiny")).tokenizer;
    greedy = await server.create(params({ max_completion_tokens: 24 }));
  });
  afterAll(async () => {
    await server?.close();
  });

  it("runs greedy decoding exactly as the engine does on the rendered prompt", async () => {
    expect(greedy.choices[0]!.finish_reason).toBe("length");
    expect(greedy.usage.completion_tokens).toBe(24);
    const promptIds = greedy.prompt_token_ids!;
    expect(tokenizer.decode(promptIds, { skipSpecialTokens: false })).toBe("<|im_start|>user\nTell me a story.<|im_end|>\n<|im_start|>assistant\n");
    const events = await direct(promptIds, { temperature: 0, maxTokens: 24, ignoreEos: true });
    expect(tokensOf(greedy)).toEqual(choiceIds(events));
    expect(greedy.choices[0]!.message.content).toBe(tokenizer.decode(tokensOf(greedy)));
  });

  it("reproduces seeded samples, gives choice i the seed + i, and differs across seeds", async () => {
    const three = await server.create(params({ n: 3, temperature: 1, seed: 41 }));
    expect(three.choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
    expect(three.usage.completion_tokens).toBe(36);
    const again = await server.create(params({ n: 3, temperature: 1, seed: 41 }));
    expect(again.choices.map((choice) => choice.token_ids)).toEqual(three.choices.map((choice) => choice.token_ids));
    const second = await server.create(params({ temperature: 1, seed: 42 }));
    expect(tokensOf(second)).toEqual(tokensOf(three, 1));
    expect(new Set(three.choices.map((choice) => JSON.stringify(choice.token_ids))).size).toBe(3);
  });

  it("treats top_k 1, a tiny top_p and min_p 1 as greedy at any temperature", async () => {
    for (const fields of [{ top_k: 1 }, { top_p: 1e-9 }, { min_p: 1 }]) {
      const sampled = await server.create(params({ ...fields, temperature: 1.5, seed: 7, max_completion_tokens: 24 }));
      expect(tokensOf(sampled), JSON.stringify(fields)).toEqual(tokensOf(greedy));
    }
  });

  it("returns n beams best first, scored by cumulative logprob", async () => {
    const beams = await server.create(params({ n: 3, use_beam_search: true, logprobs: true, max_completion_tokens: 6 }));
    expect(beams.choices).toHaveLength(3);
    const scores = beams.choices.map((choice) => choice.logprobs!.content.reduce((sum, entry) => sum + entry.logprob, 0));
    expect(beams.choices.every((choice) => choice.token_ids!.length === 6 && choice.finish_reason === "length")).toBe(true);
    expect(scores[0]).toBeGreaterThanOrEqual(scores[1]!);
    expect(scores[1]).toBeGreaterThanOrEqual(scores[2]!);
    expect(new Set(beams.choices.map((choice) => JSON.stringify(choice.token_ids))).size).toBe(3);
  });

  it("stops at a stop string, cutting the text before it or keeping it on request", async () => {
    const word = wordToken(tokensOf(greedy));
    const content = greedy.choices[0]!.message.content!;
    const cut = content.indexOf(word.text);
    const stopped = await server.create(params({ stop: ["never-generated", word.text], max_completion_tokens: 24 }));
    expect(stopped.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: word.text, message: { content: content.slice(0, cut) } });
    // The tokens that made the stop string stay in the output.
    expect(tokensOf(stopped)).toEqual(tokensOf(greedy).slice(0, word.index + 1));
    const kept = await server.create(params({ stop: word.text, include_stop_str_in_output: true, max_completion_tokens: 24 }));
    expect(kept.choices[0]!.message.content).toBe(content.slice(0, cut + word.text.length));
    // Streamed, no part of the stop string leaks out before the match is known.
    const chunks = chunksOf(await readSse(await server.post({ ...params({ stop: [word.text], max_completion_tokens: 24 }), stream: true })));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(content.slice(0, cut));
    expect(chunks.at(-1)!.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: word.text });
  });

  it("stops at a stop token id, reporting it as the stop_reason without its text", async () => {
    const word = wordToken(tokensOf(greedy));
    const stopped = await server.create(params({ stop_token_ids: [word.id], max_completion_tokens: 24 }));
    expect(stopped.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: word.id });
    expect(tokensOf(stopped)).toEqual(tokensOf(greedy).slice(0, word.index + 1));
    expect(stopped.choices[0]!.message.content).toBe(tokenizer.decode(tokensOf(greedy).slice(0, word.index)));
  });

  it("ends at EOS unless ignore_eos, never before min_tokens", async () => {
    const towardEos = { logit_bias: { [eos]: 100 }, ignore_eos: false };
    const atOnce = await server.create(params(towardEos));
    expect(atOnce.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: null, token_ids: [eos], message: { content: "" } });
    const later = await server.create(params({ ...towardEos, min_tokens: 5 }));
    expect(tokensOf(later)).toHaveLength(6);
    expect(tokensOf(later).slice(0, 5)).not.toContain(eos);
    expect(later.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: null });
    // generation_config.json's second EOS id stops too, and is named as the stop reason.
    const second = await server.create(params({ logit_bias: { [endOfText]: 100 }, ignore_eos: false }));
    expect(second.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: endOfText, token_ids: [endOfText] });
    const ignoring = await server.create(params({ ...towardEos, ignore_eos: true, max_completion_tokens: 4 }));
    expect(ignoring.choices[0]).toMatchObject({ finish_reason: "length", token_ids: [eos, eos, eos, eos] });
  });

  it("biases logits, limits the vocabulary with allowed_token_ids, and bans bad words", async () => {
    const forced = tokensOf(greedy)[3]!;
    const biased = await server.create(params({ logit_bias: { [forced]: 100 }, max_completion_tokens: 5 }));
    expect(tokensOf(biased)).toEqual([forced, forced, forced, forced, forced]);
    const first = tokensOf(greedy)[0]!;
    const avoided = await server.create(params({ logit_bias: { [first]: -100 } }));
    expect(tokensOf(avoided)[0]).not.toBe(first);

    const allowed = [tokenizer.encode("a")[0]!, tokenizer.encode("b")[0]!, tokenizer.encode(" c")[0]!];
    const limited = await server.create(params({ allowed_token_ids: allowed, temperature: 1, seed: 3, max_completion_tokens: 16 }));
    expect(tokensOf(limited).every((id) => allowed.includes(id))).toBe(true);
    expect(new Set(tokensOf(limited)).size).toBeGreaterThan(1);

    const word = wordToken(tokensOf(greedy));
    const banned = await server.create(params({ bad_words: [word.text], max_completion_tokens: 24 }));
    expect(tokensOf(banned)).not.toContain(word.id);
    expect(tokensOf(banned).slice(0, word.index)).toEqual(tokensOf(greedy).slice(0, word.index));
  });

  it("applies frequency, presence and repetition penalties to the raw logits", async () => {
    const favoured = tokensOf(greedy)[3]!;
    const count = (completion: Completion) => tokensOf(completion).filter((id) => id === favoured).length;
    const free = await server.create(params({ logit_bias: { [favoured]: 6 }, max_completion_tokens: 16 }));
    expect(count(free)).toBe(16);
    for (const penalty of [{ frequency_penalty: 2 }, { presence_penalty: 2 }, { repetition_penalty: 2 }]) {
      const penalised = await server.create(params({ logit_bias: { [favoured]: 6 }, max_completion_tokens: 16, ...penalty }));
      expect(count(penalised), JSON.stringify(penalty)).toBeLessThan(16);
      const engine = await direct(greedy.prompt_token_ids!, {
        temperature: 0,
        maxTokens: 16,
        ignoreEos: true,
        logitBias: new Map([[favoured, 6]]),
        frequencyPenalty: penalty.frequency_penalty ?? 0,
        presencePenalty: penalty.presence_penalty ?? 0,
        repetitionPenalty: penalty.repetition_penalty ?? 1,
      });
      expect(tokensOf(penalised)).toEqual(choiceIds(engine));
    }
  });

  it("ends a repeating output early with repetition_detection", async () => {
    const repeated = tokensOf(greedy)[3]!;
    const detected = await server.create(params({ logit_bias: { [repeated]: 100 }, max_completion_tokens: 20, repetition_detection: { max_pattern_size: 2, min_count: 3 } }));
    expect(detected.choices[0]).toMatchObject({ finish_reason: "repetition", stop_reason: "repetition_detected", token_ids: [repeated, repeated, repeated] });
    const loose = await server.create(params({ logit_bias: { [repeated]: 100 }, max_completion_tokens: 20, repetition_detection: { max_pattern_size: 0 } }));
    expect(loose.choices[0]!.finish_reason).toBe("length");
  });

  it("keeps the last prompt tokens with truncate_prompt_tokens and budgets max_tokens", async () => {
    const full = greedy.prompt_token_ids!;
    const truncated = await server.create(params({ truncate_prompt_tokens: 5 }));
    expect(truncated.prompt_token_ids).toEqual(full.slice(-5));
    expect(truncated.usage.prompt_tokens).toBe(5);
    expect(tokensOf(truncated)).toEqual(choiceIds(await direct(full.slice(-5), { temperature: 0, maxTokens: 12, ignoreEos: true })));
    const whole = await server.create(params({ truncate_prompt_tokens: -1 }));
    expect(whole.prompt_token_ids).toEqual(full);

    const deprecated = await server.create(params({ max_completion_tokens: undefined, max_tokens: 3 }));
    expect(deprecated.usage.completion_tokens).toBe(3);
    const both = await server.create(params({ max_completion_tokens: 2, max_tokens: 3 }));
    expect(both.usage.completion_tokens).toBe(2);
  });

  it("answers the sampling rules with vLLM's 400s through the SDK", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ n: 2 }, "n must be 1 when using greedy sampling, got 2."],
      [{ temperature: 2.5 }, "temperature must be in [0, 2], got 2.5."],
      [{ min_tokens: 20 }, "min_tokens must be less than or equal to max_tokens=12, got 20."],
      [{ stop: [""] }, "stop cannot contain an empty string."],
      [{ logit_bias: { "100000": 1 } }, "in logit_bias contain out-of-vocab token ids. Vocabulary size: 576"],
      [{ allowed_token_ids: [99999] }, "allowed_token_ids contains out-of-vocab token id!"],
      [{ truncate_prompt_tokens: 2047 }, "cannot be greater than max_model_len - max_completion_tokens"],
      [{ max_completion_tokens: 4096 }, "max_completion_tokens=4096 cannot be greater than max_model_len=2048"],
      [{ repetition_detection: { max_pattern_size: 2, min_count: 1 } }, "min_count must be >= 2"],
    ];
    for (const [fields, message] of cases) {
      await expect(server.client.chat.completions.create(params(fields)), JSON.stringify(fields)).rejects.toMatchObject({ status: 400, message: expect.stringContaining(message) });
    }
  });
});
