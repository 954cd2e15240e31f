import { describe, expect, it } from "vitest";
import { ByteTokenizer } from "../../testing/byte-tokenizer.js";
import { advanceUtf8, isValidUtf8Fragment, UTF8_BOUNDARY, Utf8Masks } from "./utf8.js";

const bytes = (...values: number[]) => Uint8Array.from(values);

describe("isValidUtf8Fragment", () => {
  it.each([
    ["ASCII", [0x61, 0x62], true],
    ["a whole two-byte character", [0xc3, 0xa9], true],
    ["the tail of a character, then ASCII", [0xa9, 0x61], true],
    ["the start of a three-byte character", [0x61, 0xe2, 0x82], true],
    ["four leading continuation bytes", [0x80, 0x80, 0x80, 0x80], false],
    ["an overlong two-byte form", [0xc0, 0xa7], false],
    ["C1", [0xc1], false],
    ["an overlong three-byte form", [0xe0, 0x80], false],
    ["a surrogate", [0xed, 0xa0], false],
    ["an overlong four-byte form", [0xf0, 0x80], false],
    ["a code point past U+10FFFF", [0xf4, 0x90], false],
    ["F5", [0xf5], false],
    ["a lead byte cut short by ASCII", [0xc3, 0x41], false],
    ["a continuation byte after a whole character", [0xc3, 0xa9, 0xa9], false],
  ])("%s", (_name, values, valid) => {
    expect(isValidUtf8Fragment(bytes(...values))).toBe(valid);
  });
});

describe("advanceUtf8", () => {
  it("tracks the continuation bytes owed and a narrowed next byte", () => {
    expect(advanceUtf8(UTF8_BOUNDARY, bytes(0x61))).toBe(UTF8_BOUNDARY);
    const afterE0 = advanceUtf8(UTF8_BOUNDARY, bytes(0xe0));
    expect(afterE0 >> 8).toBe(2);
    expect(afterE0 & 0xff).toBe(0xe0);
    const afterE0A0 = advanceUtf8(afterE0, bytes(0xa0));
    expect(afterE0A0).toBe(1 << 8);
    expect(advanceUtf8(afterE0A0, bytes(0x80, 0x61))).toBe(UTF8_BOUNDARY);
  });
});

describe("Utf8Masks", () => {
  const tokenizer = new ByteTokenizer(["é", "ab"]);
  const eos = tokenizer.eosTokenId;
  const producible = Array.from({ length: tokenizer.vocabSize }, (_, id) => (tokenizer.isSpecial(id) ? undefined : tokenizer.tokenBytes(id)));
  const masks = new Utf8Masks(producible, new Set([eos]), tokenizer.vocabSize + 7);
  const allows = (state: number, id: number) => (masks.allowed(state)[id >>> 5]! & (1 << (id & 31))) !== 0;

  it("at a character boundary allows ASCII, lead bytes, whole characters and the stop token, no continuation byte", () => {
    expect(allows(UTF8_BOUNDARY, 0x61)).toBe(true);
    expect(allows(UTF8_BOUNDARY, 0xc3)).toBe(true);
    expect(allows(UTF8_BOUNDARY, tokenizer.tokenId("Ã©")!)).toBe(true);
    expect(allows(UTF8_BOUNDARY, eos)).toBe(true);
    expect(allows(UTF8_BOUNDARY, 0xa9)).toBe(false);
    expect(allows(UTF8_BOUNDARY, tokenizer.tokenId("<|im_start|>")!)).toBe(false);
    expect(allows(UTF8_BOUNDARY, tokenizer.vocabSize + 3)).toBe(false);
  });

  it("mid-character allows only the continuation bytes owed, in the narrowed range, and no stop", () => {
    const afterE0 = advanceUtf8(UTF8_BOUNDARY, bytes(0xe0));
    expect(allows(afterE0, 0xa0)).toBe(true);
    expect(allows(afterE0, 0x9f)).toBe(false); // overlong
    expect(allows(afterE0, 0x61)).toBe(false);
    expect(allows(afterE0, eos)).toBe(false);
    const afterC3 = advanceUtf8(UTF8_BOUNDARY, bytes(0xc3));
    expect(allows(afterC3, 0x80)).toBe(true);
    expect(allows(afterC3, 0xc3)).toBe(false);
    const afterED = advanceUtf8(UTF8_BOUNDARY, bytes(0xed));
    expect(allows(afterED, 0x9f)).toBe(true);
    expect(allows(afterED, 0xa0)).toBe(false); // a surrogate
  });
});
