import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "./byte-tokenizer.js";

describe("ByteTokenizer", () => {
  const tokenizer = new ByteTokenizer();

  it("round-trips text, preferring the longest piece", () => {
    const ids = tokenizer.encode('hello world {"a": true}');
    expect(tokenizer.decode(ids)).toBe('hello world {"a": true}');
    expect(tokenizer.tokenString(ids[0]!)).toBe("hello");
    expect(tokenizer.tokenString(ids[1]!)).toBe("Ġworld");
  });

  it("keeps special tokens whole and can skip them", () => {
    const ids = tokenizer.encode("<|im_start|>hi<|im_end|>");
    expect(ids[0]).toBe(tokenizer.tokenId("<|im_start|>"));
    expect(tokenizer.isSpecial(ids[0]!)).toBe(true);
    expect(tokenizer.decode(ids, { skipSpecialTokens: true })).toBe("hi");
  });

  it("returns true bytes for multi-byte characters", () => {
    const id = tokenizer.tokenId("Ã©")!;
    expect([...tokenizer.tokenBytes(id)]).toEqual([0xc3, 0xa9]);
    expect(tokenizer.decode([0xc3])).toBe("\ufffd");
  });
});
