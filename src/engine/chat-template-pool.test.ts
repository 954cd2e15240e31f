import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, describe, expect, it } from "vitest";
import { tinyModel } from "../testing/models.js";
import { readTokenizerConfig } from "./checkpoint/tokenizer-config.js";
import { ChatTemplateError } from "./chat-template.js";
import { ChatTemplatePool } from "./chat-template-pool.js";
import { HfTokenizer } from "./tokenizer/hf-tokenizer.js";

const CONTENT = "{{ messages[0].content }}";
const words = (chars: number) =>
  Array.from({ length: Math.ceil(chars / 6) }, (_, i) => ["river", "stone", "light", "quiet"][i % 4])
    .join(" ")
    .slice(0, chars);

describe("the chat template pool's tokenization", () => {
  const pool = new ChatTemplatePool({ timeoutMs: 20_000, maxOutputChars: 2_000_000, memoryMb: 256, threads: 1 });
  const strict = new ChatTemplatePool({ timeoutMs: 300, maxOutputChars: 2_000_000, memoryMb: 256, threads: 1 });
  afterAll(async () => {
    await pool.close();
    await strict.close();
  });

  it("gives the ids the model's own tokenizer gives, with and without its special tokens", async () => {
    const llama = tinyModel("llama");
    const tokenizer = HfTokenizer.load(llama.dir, readTokenizerConfig(llama.dir));
    expect(tokenizer.sourceDir).toBe(llama.dir);
    const text = "Hello there <|im_end|> 12 + 30 = 42";
    for (const addSpecialTokens of [false, true]) {
      const rendered = await pool.render(CONTENT, { messages: [{ role: "user", content: text }] }, { tokenizerDir: llama.dir, addSpecialTokens });
      expect(rendered.text).toBe(text);
      expect(rendered.tokenIds).toEqual(tokenizer.encode(text, { addSpecialTokens }));
    }
    expect(tokenizer.encode(text, { addSpecialTokens: true })[0]).toBe(tokenizer.bosTokenId);
    expect(await pool.render(CONTENT, { messages: [{ role: "user", content: text }] })).toEqual({ text });
  });

  it("tokenizes a long prompt without holding the event loop", async () => {
    const dir = tinyModel("qwen2").dir;
    const text = words(400_000);
    const inlineStarted = performance.now();
    const expected = HfTokenizer.load(dir, readTokenizerConfig(dir)).encode(text);
    const inlineMs = performance.now() - inlineStarted;
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const rendered = await pool.render(CONTENT, { messages: [{ role: "user", content: text }] }, { tokenizerDir: dir, addSpecialTokens: false });
    delay.disable();
    expect(rendered.tokenIds).toEqual(expected);
    // Inline, the same work holds the loop for all of `inlineMs` (hundreds of ms or more).
    expect(delay.max / 1e6, `inline tokenization took ${inlineMs.toFixed(0)} ms`).toBeLessThan(Math.max(100, inlineMs / 4));
  }, 60_000);

  it("stops a tokenization past the time limit with a clear error, and the next job still runs", async () => {
    const dir = tinyModel("qwen2").dir;
    // One word of 1.5 million characters: byte-pair merging of it takes seconds.
    const job = strict.render(CONTENT, { messages: [{ role: "user", content: "x".repeat(1_500_000) }] }, { tokenizerDir: dir, addSpecialTokens: false });
    const error = await job.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ChatTemplateError);
    expect(error).toMatchObject({ kind: "limit", message: "The prompt did not finish rendering and tokenizing within 300 ms (FLYWHEEL_CHAT_TEMPLATE_TIMEOUT_MS)" });
    const next = await strict.render(CONTENT, { messages: [{ role: "user", content: "hi" }] }, { tokenizerDir: dir, addSpecialTokens: false });
    expect(next.text).toBe("hi");
    expect(next.tokenIds!.length).toBeGreaterThan(0);
  }, 60_000);
});
