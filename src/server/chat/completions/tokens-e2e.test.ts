import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tokenizer } from "../../../engine/tokenizer/types.js";
import { type ChatParams, type ChatServer, chunksOf, type LogprobOut, readSse, startChatServer } from "../../../testing/chat-server.js";
import { loadTinyModel, tinyModel } from "../../../testing/models.js";
import { testDialects } from "../../../testing/stores.js";

/** log_softmax of one row of logits, in doubles. */
function logSoftmax(logits: Float32Array, row: number, vocab: number): Float64Array {
  const values = logits.subarray(row * vocab, (row + 1) * vocab);
  let max = -Infinity;
  for (const value of values) max = Math.max(max, value);
  let sum = 0;
  for (const value of values) sum += Math.exp(value - max);
  const out = new Float64Array(vocab);
  for (let i = 0; i < vocab; i++) out[i] = values[i]! - max - Math.log(sum);
  return out;
}

/**
 * Token-level output end to end (`docs/api/chat.md#logprobs`): logprobs and their true bytes, top and prompt
 * logprobs against the model's own forward pass, token ids, `token_id:<id>` strings, echo with
 * continue_final_message, and add_special_tokens — through the OpenAI SDK on a real engine.
 */
describe.each(testDialects)("chat completion token outputs end to end (%s)", (dialect) => {
  const qwen = tinyModel("qwen2");
  const llama = tinyModel("llama");
  let server: ChatServer;
  let tokenizer: Tokenizer;

  const params = (fields: Record<string, unknown> = {}): ChatParams => ({
    model: "test/tiny",
    messages: [{ role: "user", content: "Count to three." }],
    temperature: 0,
    repetition_penalty: 1,
    max_completion_tokens: 8,
    ignore_eos: true,
    return_token_ids: true,
    ...fields,
  });

  beforeAll(async () => {
    server = await startChatServer(dialect, { servedModels: { "test/tiny": qwen.dir, "test/llama": llama.dir } });
    tokenizer = (await server.engine("test/tiny")).tokenizer;
  });
  afterAll(async () => {
    await server?.close();
  });

  it("returns raw model logprobs with the true top-k, whatever the sampling transforms", async () => {
    const completion = await server.create(params({ logprobs: true, top_logprobs: 3, temperature: 0.5, top_k: 5, repetition_penalty: 1.3, seed: 1 }));
    const choice = completion.choices[0]!;
    const entries = choice.logprobs!.content;
    expect(entries).toHaveLength(8);
    // The first generated position, recomputed with the model's own forward pass.
    const transformer = loadTinyModel("qwen2").transformer;
    const prompt = completion.prompt_token_ids!;
    const vocab = transformer.config.vocabSize;
    const expected = logSoftmax(transformer.logitsOf(prompt), prompt.length - 1, vocab);
    const first = choice.token_ids![0]!;
    expect(entries[0]!.logprob).toBeCloseTo(expected[first]!, 4);
    const top = [...expected.keys()].sort((a, b) => expected[b]! - expected[a]! || a - b).slice(0, 3);
    expect(entries[0]!.top_logprobs.map((alternative) => alternative.token)).toEqual(top.map((id) => tokenizer.decode([id], { skipSpecialTokens: false })));
    entries[0]!.top_logprobs.forEach((alternative, rank) => expect(alternative.logprob).toBeCloseTo(expected[top[rank]!]!, 4));
    for (const [position, entry] of entries.entries()) {
      const id = choice.token_ids![position]!;
      expect(entry.token).toBe(tokenizer.decode([id], { skipSpecialTokens: false }));
      expect(entry.bytes).toEqual([...tokenizer.tokenBytes(id)]);
      expect(entry.top_logprobs).toHaveLength(3);
      const logprobs = entry.top_logprobs.map((alternative) => alternative.logprob);
      expect(logprobs).toEqual([...logprobs].sort((a, b) => b - a));
    }
    const none = await server.create(params());
    expect(none.choices[0]!.logprobs).toBeNull();
    const zero = await server.create(params({ logprobs: true }));
    expect(zero.choices[0]!.logprobs!.content.every((entry) => entry.top_logprobs.length === 0)).toBe(true);
  });

  it("writes tokens as token_id:<id> on request, keeping each token's true bytes", async () => {
    // Two CJK characters, forced: their UTF-8 bytes come as single-byte tokens, none a whole character.
    const forced = { structured_outputs: { choice: ["日本"] }, ignore_eos: false, max_completion_tokens: 16, logprobs: true, top_logprobs: 2 };
    const plain = await server.create(params(forced));
    const asIds = await server.create(params({ ...forced, return_tokens_as_token_ids: true }));
    expect(plain.choices[0]!.message.content).toBe("日本");
    const ids = asIds.choices[0]!.token_ids!;
    expect(ids).toEqual(plain.choices[0]!.token_ids);
    const text = (entries: LogprobOut[]) => Buffer.from(entries.slice(0, -1).flatMap((entry) => entry.bytes!)).toString("utf8");
    expect(text(plain.choices[0]!.logprobs!.content)).toBe("日本");
    expect(text(asIds.choices[0]!.logprobs!.content)).toBe("日本");
    expect(plain.choices[0]!.logprobs!.content.some((entry) => entry.token.includes("\uFFFD"))).toBe(true);
    asIds.choices[0]!.logprobs!.content.forEach((entry, position) => {
      expect(entry.token).toBe(`token_id:${ids[position]}`);
      expect(entry.bytes).toEqual([...tokenizer.tokenBytes(ids[position]!)]);
      for (const alternative of entry.top_logprobs) {
        expect(alternative.token).toMatch(/^token_id:\d+$/);
        expect(alternative.bytes).toEqual([...tokenizer.tokenBytes(Number(alternative.token.slice("token_id:".length)))]);
      }
    });
  });

  it("returns prompt logprobs per prompt token, ranked, without reading cached KV", async () => {
    await server.create(params());
    const completion = await server.create(params({ prompt_logprobs: 2 }));
    const prompt = completion.prompt_token_ids!;
    expect(completion.usage.prompt_tokens_details.cached_tokens).toBe(0);
    const positions = completion.prompt_logprobs!;
    expect(positions).toHaveLength(prompt.length);
    expect(positions[0]).toBeNull();
    const transformer = loadTinyModel("qwen2").transformer;
    const vocab = transformer.config.vocabSize;
    const logits = transformer.logitsOf(prompt);
    for (let j = 1; j < prompt.length; j++) {
      const position = positions[j]!;
      const expected = logSoftmax(logits, j - 1, vocab);
      const actual = position[String(prompt[j])]!;
      expect(actual.logprob).toBeCloseTo(expected[prompt[j]!]!, 4);
      expect(actual.rank).toBe([...expected].filter((logprob) => logprob >= expected[prompt[j]!]!).length);
      expect(actual.decoded_token).toBe(tokenizer.decode([prompt[j]!], { skipSpecialTokens: false }));
      expect(Object.keys(position).length).toBeGreaterThanOrEqual(2);
      expect(Object.keys(position).length).toBeLessThanOrEqual(3);
      expect(Object.values(position).some((entry) => entry.rank === 1)).toBe(true);
    }
    const without = await server.create(params());
    expect(without.prompt_logprobs).toBeNull();
  });

  it("returns the templated prompt's ids and the generated ids only when asked", async () => {
    const completion = await server.create(params());
    expect(tokenizer.decode(completion.prompt_token_ids!, { skipSpecialTokens: false })).toBe("<|im_start|>user\nCount to three.<|im_end|>\n<|im_start|>assistant\n");
    expect(completion.usage.prompt_tokens).toBe(completion.prompt_token_ids!.length);
    expect(tokenizer.decode(completion.choices[0]!.token_ids!)).toBe(completion.choices[0]!.message.content);
    const without = await server.create(params({ return_token_ids: false }));
    expect(without.prompt_token_ids).toBeNull();
    expect(without.choices[0]!.token_ids).toBeNull();
    expect(without.choices[0]!.message.content).toBe(completion.choices[0]!.message.content);
  });

  it("drops special tokens from the text unless skip_special_tokens is false, spaced on request", async () => {
    const forced = { logit_bias: { [qwen.tokenIds["<|im_start|>"]!]: 100 }, max_completion_tokens: 3 };
    const skipped = await server.create(params(forced));
    expect(skipped.choices[0]!.message.content).toBe("");
    expect(skipped.choices[0]!.token_ids).toHaveLength(3);
    expect((await server.create(params({ ...forced, skip_special_tokens: false }))).choices[0]!.message.content).toBe("<|im_start|> <|im_start|> <|im_start|>");
    expect((await server.create(params({ ...forced, skip_special_tokens: false, spaces_between_special_tokens: false }))).choices[0]!.message.content).toBe("<|im_start|><|im_start|><|im_start|>");
  });

  it("continues the final message with continue_final_message and echoes it", async () => {
    const messages = [
      { role: "user", content: "Count to three." },
      { role: "assistant", content: "One, two," },
    ];
    const continued = await server.create(params({ messages, add_generation_prompt: false, continue_final_message: true }));
    expect(tokenizer.decode(continued.prompt_token_ids!, { skipSpecialTokens: false })).toBe("<|im_start|>user\nCount to three.<|im_end|>\n<|im_start|>assistant\nOne, two,");
    const generated = continued.choices[0]!.message.content!;
    expect(continued.choices[0]!.message.role).toBe("assistant");
    const echoed = await server.create(params({ messages, add_generation_prompt: false, continue_final_message: true, echo: true }));
    expect(echoed.choices[0]!.message.content).toBe(`One, two,${generated}`);
    expect(echoed.choices[0]!.token_ids).toEqual(continued.choices[0]!.token_ids);
    // echo turns prompt logprobs on (top_logprobs of them: only the actual token).
    expect(echoed.prompt_logprobs).toHaveLength(echoed.prompt_token_ids!.length);
    expect(Object.keys(echoed.prompt_logprobs![1]!)).toEqual([String(echoed.prompt_token_ids![1])]);

    const stream = await server.post({ ...params({ messages, add_generation_prompt: false, continue_final_message: true, echo: true }), stream: true });
    const chunks = chunksOf(await readSse(stream));
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks[1]!.choices[0]!.delta).toEqual({ content: "One, two," });
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(`One, two,${generated}`);

    // After a generation prompt the reply is a new assistant message: nothing of the user's is echoed.
    const fresh = await server.create(params({ echo: true }));
    expect(fresh.choices[0]!.message.content).toBe((await server.create(params())).choices[0]!.message.content);
    await expect(server.client.chat.completions.create(params({ messages, continue_final_message: true }))).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("Cannot set both `continue_final_message` and `add_generation_prompt` to True."),
    });
  });

  it("adds the tokenizer's BOS on top of the template only with add_special_tokens", async () => {
    const llamaTokenizer = (await server.engine("test/llama")).tokenizer;
    const bos = llama.tokenIds["<|begin_of_text|>"]!;
    const plain = await server.create(params({ model: "test/llama" }));
    const withSpecial = await server.create(params({ model: "test/llama", add_special_tokens: true }));
    expect(plain.prompt_token_ids![0]).not.toBe(bos);
    expect(withSpecial.prompt_token_ids).toEqual([bos, ...plain.prompt_token_ids!]);
    expect(withSpecial.usage.prompt_tokens).toBe(plain.usage.prompt_tokens + 1);
    expect(llamaTokenizer.decode(withSpecial.prompt_token_ids!, { skipSpecialTokens: false }).startsWith("<|begin_of_text|><|im_start|>user")).toBe(true);
    // The model sees a different prompt, so it answers differently.
    expect(withSpecial.choices[0]!.token_ids).not.toEqual(plain.choices[0]!.token_ids);
  });
});
