import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { banBadWords, tokenizeBadWords } from "./bad-words.js";

describe("tokenizeBadWords", () => {
  const tokenizer = new ByteTokenizer(["cat", " cat", "dog"]);
  const id = (piece: string) => tokenizer.encode(piece)[0]!;

  it("keeps the leading-space variant when it is a different single word of the same length", () => {
    expect(tokenizeBadWords(tokenizer, ["cat"])).toEqual([[id("cat")], [id(" cat")]]);
    // Leading spaces of the word itself are stripped first.
    expect(tokenizeBadWords(tokenizer, ["  cat"])).toEqual([[id("cat")], [id(" cat")]]);
  });

  it("drops the space variant when it tokenizes to a different length", () => {
    // " dog" is " " + "dog": two tokens against one.
    expect(tokenizeBadWords(tokenizer, ["dog"])).toEqual([[id("dog")]]);
  });

  it("tokenizes multi-token words", () => {
    expect(tokenizeBadWords(tokenizer, ["dogcat"])).toEqual([[id("dog"), id("cat")]]);
  });
});

describe("banBadWords", () => {
  it("always bans a one-token word and bans the last token of a longer word only after its prefix", () => {
    const words = [[4], [1, 2, 3]];
    const logits = new Float32Array(6).fill(0);
    banBadWords(logits, 6, words, [1]);
    expect([...logits]).toEqual([0, 0, 0, 0, -Infinity, 0]);
    logits.fill(0);
    banBadWords(logits, 6, words, [0, 1, 2]);
    expect([...logits]).toEqual([0, 0, 0, -Infinity, -Infinity, 0]);
  });

  it("looks at generated tokens only (a prefix longer than the output never matches)", () => {
    const logits = new Float32Array(4).fill(0);
    banBadWords(logits, 4, [[1, 2, 3]], [2]);
    expect([...logits]).toEqual([0, 0, 0, 0]);
  });
});
