import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { TokenDisplayCache } from "./token-display.js";

describe("TokenDisplayCache", () => {
  const tokenizer = new ByteTokenizer();
  const display = new TokenDisplayCache(tokenizer);

  it("decodes a token on its own, not its raw vocabulary piece", () => {
    const id = tokenizer.tokenId("Ġworld")!;
    expect(display.get(id)).toEqual({ text: " world", bytes: [32, 119, 111, 114, 108, 100] });
  });

  it("shows special tokens literally", () => {
    expect(display.get(tokenizer.tokenId("<|im_end|>")!).text).toBe("<|im_end|>");
  });

  it("gives a partial character as U+FFFD with its true bytes", () => {
    expect(display.get(0xe2)).toEqual({ text: "\ufffd", bytes: [0xe2] });
    expect(display.get(tokenizer.tokenId("Ã©")!)).toEqual({ text: "é", bytes: [0xc3, 0xa9] });
  });

  it("returns the same object for a repeated id", () => {
    expect(display.get(65)).toBe(display.get(65));
  });
});
