import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { buildVocabulary } from "./vocabulary.js";

describe("buildVocabulary", () => {
  const tokenizer = new ByteTokenizer([" the", "é", '{"']);
  const eos = tokenizer.eosTokenId;
  const imEnd = tokenizer.tokenId("<|im_end|>")!;

  it("writes each token's bytes with GPT-2's byte names", () => {
    const { encoded, producible } = buildVocabulary(tokenizer, [eos]);
    expect(encoded[0x61]).toBe("a");
    expect(encoded[0x20]).toBe("Ġ");
    expect(encoded[0x0a]).toBe("Ċ");
    expect(encoded[tokenizer.tokenId("Ġthe")!]).toBe("Ġthe");
    expect(encoded[tokenizer.tokenId("Ã©")!]).toBe("Ã©");
    expect(encoded[tokenizer.tokenId('{"')!]).toBe('{"');
    expect([...producible[tokenizer.tokenId("Ã©")!]!]).toEqual([0xc3, 0xa9]);
  });

  it("keeps stop tokens, and marks other special tokens and never-valid bytes unproducible", () => {
    const { encoded, producible } = buildVocabulary(tokenizer, [eos, imEnd]);
    expect(encoded[eos]).toBe("<|endoftext|>");
    expect(encoded[imEnd]).toBe("<|im_end|>");
    expect(producible[eos]).toBeUndefined(); // stop tokens end the output rather than add to it
    expect(encoded[tokenizer.tokenId("<|im_start|>")!]).toBe("");
    for (const byte of [0xc0, 0xc1, 0xf5, 0xff]) {
      expect(encoded[byte]).toBe("");
      expect(producible[byte]).toBeUndefined();
    }
    expect(encoded[0x80]).not.toBe(""); // a continuation byte can finish a character
  });

  it("reaches stop ids past the tokenizer's own vocabulary", () => {
    const { encoded } = buildVocabulary(tokenizer, [eos, tokenizer.vocabSize + 2]);
    expect(encoded).toHaveLength(tokenizer.vocabSize + 3);
    expect(encoded[tokenizer.vocabSize]).toBe("");
  });
});
