import { describe, expect, it } from "vitest";
import { checkStop, detectRepetition, type StopRules } from "./stop.js";

const rules = (overrides: Partial<StopRules> = {}): StopRules => ({
  minTokens: 0,
  maxTokens: 10,
  eosTokenId: 0,
  stopTokenIds: new Set([7]),
  maxModelLen: 100,
  repetitionDetection: null,
  ...overrides,
});

describe("checkStop", () => {
  it("stops on EOS with stop_reason null and on stop ids with the id", () => {
    expect(checkStop(rules(), [3, 0], 5)).toEqual({ finishReason: "stop", stopReason: null });
    expect(checkStop(rules(), [3, 7], 5)).toEqual({ finishReason: "stop", stopReason: 7 });
    expect(checkStop(rules(), [3, 4], 5)).toBeNull();
  });

  it("never stops before min_tokens, not even for length", () => {
    const minRules = rules({ minTokens: 3, maxTokens: 2 });
    expect(checkStop(minRules, [0], 5)).toBeNull();
    expect(checkStop(minRules, [1, 7], 5)).toBeNull();
    expect(checkStop(minRules, [1, 2, 0], 5)).toEqual({ finishReason: "stop", stopReason: null });
  });

  it("stops for length at max_tokens or at the context length", () => {
    expect(checkStop(rules({ maxTokens: 2 }), [1, 2], 5)).toEqual({ finishReason: "length", stopReason: null });
    expect(checkStop(rules({ maxModelLen: 7 }), [1, 2], 5)).toEqual({ finishReason: "length", stopReason: null });
    expect(checkStop(rules({ maxModelLen: 8 }), [1, 2], 5)).toBeNull();
  });

  it("prefers EOS over length, and length over repetition", () => {
    expect(checkStop(rules({ maxTokens: 2 }), [1, 0], 5)).toEqual({ finishReason: "stop", stopReason: null });
    const repeating = rules({ maxTokens: 4, repetitionDetection: { maxPatternSize: 1, minPatternSize: 1, minCount: 2 } });
    expect(checkStop(repeating, [1, 2, 2], 0)).toEqual({ finishReason: "repetition", stopReason: "repetition_detected" });
    expect(checkStop(repeating, [1, 2, 2, 2], 0)).toEqual({ finishReason: "length", stopReason: null });
  });

  it("does not stop on EOS under ignore_eos (eosTokenId undefined)", () => {
    expect(checkStop(rules({ eosTokenId: undefined }), [0], 5)).toBeNull();
  });
});

describe("detectRepetition", () => {
  const params = (maxPatternSize: number, minPatternSize: number, minCount: number) => ({ maxPatternSize, minPatternSize, minCount });

  it("finds a pattern repeated min_count times back to back at the end", () => {
    expect(detectRepetition([9, 1, 2, 3, 1, 2, 3], params(3, 1, 2))).toBe(true);
    expect(detectRepetition([9, 1, 2, 3, 1, 2, 3], params(3, 1, 3))).toBe(false);
    expect(detectRepetition([1, 2, 3, 1, 2, 3, 1, 2, 3], params(3, 3, 3))).toBe(true);
    expect(detectRepetition([1, 2, 1, 2, 1], params(2, 1, 2))).toBe(true); // pattern "2 1" ends it twice
    expect(detectRepetition([1, 2, 3, 1, 2, 4], params(3, 1, 2))).toBe(false);
  });

  it("honours min_pattern_size", () => {
    expect(detectRepetition([5, 5, 5, 5], params(4, 2, 2))).toBe(true); // "5 5" twice
    expect(detectRepetition([4, 5, 5], params(2, 2, 2))).toBe(false); // only L = 1 would match
  });

  it("is off when max_pattern_size is 0 or min_count < 2, and needs L·min_count tokens", () => {
    expect(detectRepetition([1, 1, 1, 1], params(0, 0, 2))).toBe(false);
    expect(detectRepetition([1, 1, 1, 1], params(2, 1, 1))).toBe(false);
    expect(detectRepetition([1, 1], params(1, 1, 3))).toBe(false);
    expect(detectRepetition([1, 1, 1], params(1, 1, 3))).toBe(true);
  });
});
