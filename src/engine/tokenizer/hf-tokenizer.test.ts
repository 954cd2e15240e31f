import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectCheckpointError } from "../../testing/checkpoint-errors.js";
import { tinyModel } from "../../testing/models.js";
import { makeTempDir } from "../../testing/stores.js";
import { parseTokenizerConfig, readTokenizerConfig } from "../checkpoint/tokenizer-config.js";
import { HfTokenizer } from "./hf-tokenizer.js";

const qwen = tinyModel("qwen2");
const llama = tinyModel("llama");
const tokenizer = HfTokenizer.load(qwen.dir, readTokenizerConfig(qwen.dir));
const scratch = makeTempDir("flywheel-tokenizer-");
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const SAMPLES = [
  "Hello, world! The weather in Paris is sunny.",
  "  leading spaces, tabs\tand\nnew lines\n\n",
  '{"name": "get_weather", "arguments": {"city": "Zürich"}}',
  "Grüße aus München — 日本語 🙂 👍🏽 ∑",
  "digits 1234567890 and symbols #$%^&*()",
];

function concat(parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => [...part]));
}

describe("HfTokenizer on a byte-level BPE tokenizer.json", () => {
  it("round-trips text, including non-ASCII and whitespace", () => {
    for (const text of SAMPLES) {
      const ids = tokenizer.encode(text);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.length).toBeLessThan(new TextEncoder().encode(text).length);
      expect(tokenizer.decode(ids)).toBe(text);
    }
    expect(tokenizer.decode([])).toBe("");
  });

  it("gives every token its true bytes, even pieces of one character", () => {
    for (const text of SAMPLES) {
      const ids = tokenizer.encode(text);
      expect(concat(ids.map((id) => tokenizer.tokenBytes(id)))).toEqual(new TextEncoder().encode(text));
    }
    const emoji = tokenizer.encode("🙂");
    expect(emoji.length).toBeGreaterThan(1);
    expect(tokenizer.tokenBytes(emoji[0]!)[0]).toBe(0xf0);
    const space = tokenizer.tokenId("Ġ")!;
    expect(tokenizer.tokenString(space)).toBe("Ġ");
    expect([...tokenizer.tokenBytes(space)]).toEqual([0x20]);
    const imEnd = qwen.tokenIds["<|im_end|>"]!;
    expect(new TextDecoder().decode(tokenizer.tokenBytes(imEnd))).toBe("<|im_end|>");
  });

  it("keeps special and added tokens whole and knows which are special", () => {
    const { tokenIds } = qwen;
    const ids = tokenizer.encode("<|im_start|>user\n<think>hi</think><|im_end|>");
    expect(ids[0]).toBe(tokenIds["<|im_start|>"]);
    expect(ids).toContain(tokenIds["<think>"]);
    expect(ids).toContain(tokenIds["</think>"]);
    expect(ids[ids.length - 1]).toBe(tokenIds["<|im_end|>"]);
    expect(tokenizer.tokenId("<|im_end|>")).toBe(tokenIds["<|im_end|>"]);
    expect(tokenizer.tokenString(tokenIds["<tool_call>"]!)).toBe("<tool_call>");
    expect(tokenizer.tokenId("no such token")).toBeUndefined();
    expect(tokenizer.isSpecial(tokenIds["<|im_end|>"]!)).toBe(true);
    expect(tokenizer.isSpecial(tokenIds["<|endoftext|>"]!)).toBe(true);
    expect(tokenizer.isSpecial(tokenIds["<think>"]!)).toBe(false);
    expect(tokenizer.isSpecial(tokenizer.encode("a")[0]!)).toBe(false);
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe("user\n<think>hi</think>");
    expect(tokenizer.decode(ids, { skipSpecialTokens: false, spacesBetweenSpecialTokens: true })).toBe("<|im_start|>user\n<think>hi</think><|im_end|>");
  });

  it("reports the vocabulary size and treats padding ids as empty", () => {
    expect(tokenizer.vocabSize).toBe(qwen.tokenizerSize);
    expect(tokenizer.eosTokenId).toBe(qwen.tokenIds["<|im_end|>"]);
    expect(tokenizer.bosTokenId).toBeUndefined();
    const padding = tokenizer.vocabSize + 2;
    expect(tokenizer.tokenBytes(padding)).toHaveLength(0);
    expect(tokenizer.tokenString(padding)).toBeUndefined();
    expect(tokenizer.decode([tokenizer.encode("a")[0]!, padding])).toBe("a");
    expect(() => tokenizer.tokenBytes(-1)).toThrow(RangeError);
    expect(() => tokenizer.decode([1.5])).toThrow(RangeError);
  });

  it("adds BOS only when asked, through the post-processor", () => {
    const withBos = HfTokenizer.load(llama.dir, readTokenizerConfig(llama.dir));
    const bos = llama.tokenIds["<|begin_of_text|>"]!;
    expect(withBos.bosTokenId).toBe(bos);
    expect(withBos.encode("hi")[0]).not.toBe(bos);
    expect(withBos.encode("hi", { addSpecialTokens: true })).toEqual([bos, ...withBos.encode("hi")]);
    expect(withBos.isSpecial(bos)).toBe(true);
  });

  it("applies clean_up_tokenization_spaces only when the config asks for it", () => {
    const json = JSON.parse(fs.readFileSync(path.join(qwen.dir, "tokenizer.json"), "utf8"));
    const raw = JSON.parse(fs.readFileSync(path.join(qwen.dir, "tokenizer_config.json"), "utf8"));
    const cleaning = new HfTokenizer(json, parseTokenizerConfig({ ...raw, clean_up_tokenization_spaces: true }));
    const text = "Yes , it is .";
    expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    expect(cleaning.decode(cleaning.encode(text))).toBe("Yes, it is.");
  });

  it("names the file and field when the tokenizer files do not fit", () => {
    const json = JSON.parse(fs.readFileSync(path.join(qwen.dir, "tokenizer.json"), "utf8"));
    const config = readTokenizerConfig(qwen.dir);
    expectCheckpointError(() => HfTokenizer.load(scratch, config), path.join(scratch, "tokenizer.json"), undefined, /is missing/);
    const file = path.join(scratch, "tokenizer.json");
    expectCheckpointError(() => new HfTokenizer({ ...json, decoder: { type: "WordPiece" } }, config, file), file, "decoder.type", /"WordPiece" is not supported/);
    expectCheckpointError(() => new HfTokenizer({ ...json, decoder: null }, config, file), file, "decoder", /is missing/);
    expectCheckpointError(() => new HfTokenizer({ ...json, model: { ...json.model, type: "Unigram" } }, config, file), file, "model.type", /"Unigram" is not supported/);
    expectCheckpointError(() => new HfTokenizer({ ...json, pre_tokenizer: { type: "Nonsense" } }, config, file), file, undefined, /cannot be loaded: .*Nonsense/);
    expectCheckpointError(() => new HfTokenizer(json, parseTokenizerConfig({ ...config.raw, bos_token: "<s>" }), file), path.join(scratch, "tokenizer_config.json"), "bos_token", /names "<s>", which is not in tokenizer.json/);
  });
});

describe("HfTokenizer on a SentencePiece-style BPE tokenizer.json", () => {
  const json = {
    version: "1.0",
    added_tokens: [
      { id: 0, content: "<unk>", special: true, normalized: false, lstrip: false, rstrip: false, single_word: false },
      { id: 1, content: "<s>", special: true, normalized: false, lstrip: false, rstrip: false, single_word: false },
    ],
    normalizer: {
      type: "Sequence",
      normalizers: [
        { type: "Prepend", prepend: "▁" },
        { type: "Replace", pattern: { String: " " }, content: "▁" },
      ],
    },
    pre_tokenizer: null,
    post_processor: null,
    decoder: {
      type: "Sequence",
      decoders: [{ type: "Replace", pattern: { String: "▁" }, content: " " }, { type: "ByteFallback" }, { type: "Fuse" }, { type: "Strip", content: " ", start: 1, stop: 0 }],
    },
    model: {
      type: "BPE",
      unk_token: "<unk>",
      byte_fallback: true,
      fuse_unk: true,
      vocab: { "<unk>": 0, "<s>": 1, "<0xC3>": 2, "<0xBC>": 3, "▁": 4, h: 5, i: 6, "▁h": 7, "▁hi": 8 },
      merges: ["▁ h", "▁h i"],
    },
  };
  const sentencepiece = new HfTokenizer(json, parseTokenizerConfig({ bos_token: "<s>", unk_token: "<unk>" }));

  it("maps ▁ to a space and <0xNN> pieces to their byte", () => {
    const ids = sentencepiece.encode("hi ü");
    expect(ids).toEqual([8, 4, 2, 3]);
    expect(concat(ids.map((id) => sentencepiece.tokenBytes(id)))).toEqual(new TextEncoder().encode(" hi ü"));
    expect(sentencepiece.decode(ids)).toBe("hi ü");
    expect(sentencepiece.bosTokenId).toBe(1);
    expect(sentencepiece.isSpecial(0)).toBe(true);
  });
});
