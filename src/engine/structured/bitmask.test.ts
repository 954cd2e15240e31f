import { describe, expect, it } from "vitest";
import { TokenBitmask } from "./bitmask.js";

describe("TokenBitmask", () => {
  // xgrammar leaves the unused bits of the last word set; ids 40..63 here are beyond the vocabulary.
  const words = Int32Array.of(0b10011, ~0xff);
  const mask = new TokenBitmask(words.slice(), 40);

  it("allows exactly the set bits below the vocabulary size", () => {
    expect(mask.allowedIds()).toEqual([0, 1, 4]);
    expect(mask.allows(4)).toBe(true);
    expect(mask.allows(2)).toBe(false);
    expect(mask.allows(45)).toBe(false);
    expect(mask.allows(-1)).toBe(false);
    expect(mask.allows(1.5)).toBe(false);
  });

  it("sets disallowed logits, and logits past the vocabulary, to -Infinity and leaves the rest", () => {
    const logits = Float32Array.from({ length: 70 }, (_, id) => id / 10);
    mask.applyTo(logits);
    for (let id = 0; id < 70; id++) {
      if (mask.allows(id)) expect(logits[id]).toBeCloseTo(id / 10);
      else expect(logits[id]).toBe(Number.NEGATIVE_INFINITY);
    }
  });

  it("skips whole allowed words and fills whole disallowed ones", () => {
    const open = new TokenBitmask(Int32Array.of(-1, 0, -1), 96);
    const logits = new Float32Array(96).fill(1);
    open.applyTo(logits);
    expect(logits.slice(0, 32).every((value) => value === 1)).toBe(true);
    expect(logits.slice(32, 64).every((value) => value === Number.NEGATIVE_INFINITY)).toBe(true);
    expect(logits.slice(64).every((value) => value === 1)).toBe(true);
  });

  it("intersects with another mask in place", () => {
    const copy = new TokenBitmask(words.slice(), 40);
    copy.intersect(Int32Array.of(0b10001, -1));
    expect(copy.allowedIds()).toEqual([0, 4]);
  });

  it("refuses a word array too short for the vocabulary", () => {
    expect(() => new TokenBitmask(new Int32Array(1), 33)).toThrow(RangeError);
  });
});
