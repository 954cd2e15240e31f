import { describe, expect, it } from "vitest";
import { defaultSamplingParams } from "./params.js";
import { SequenceState } from "./sequence.js";

describe("SequenceState", () => {
  it("merges the model's extra EOS ids into the stop ids, with stop_reason = the id", () => {
    const sequence = new SequenceState({ params: defaultSamplingParams({ stopTokenIds: [9] }), promptTokenIds: [1], eosTokenId: 0, extraEosTokenIds: [0, 5] });
    expect([...sequence.stopRules.stopTokenIds].sort()).toEqual([5, 9]);
    expect(sequence.append(5)).toEqual({ finishReason: "stop", stopReason: 5 });
  });

  it("under ignore_eos keeps only the request's stop ids, but min_tokens still bans every EOS id", () => {
    const sequence = new SequenceState({
      params: defaultSamplingParams({ ignoreEos: true, stopTokenIds: [9], minTokens: 2 }),
      promptTokenIds: [1],
      eosTokenId: 0,
      extraEosTokenIds: [5],
    });
    expect(sequence.stopRules.eosTokenId).toBeUndefined();
    expect([...sequence.stopRules.stopTokenIds]).toEqual([9]);
    expect([...sequence.minTokensBannedIds].sort()).toEqual([0, 5, 9]);
    expect(sequence.append(0)).toBeNull();
    expect(sequence.append(5)).toBeNull();
    expect(sequence.append(9)).toEqual({ finishReason: "stop", stopReason: 9 });
  });

  it("finishes for length after max_tokens and refuses further tokens", () => {
    const sequence = new SequenceState({ params: defaultSamplingParams({ maxTokens: 2 }), promptTokenIds: [1], eosTokenId: 0 });
    expect(sequence.append(3)).toBeNull();
    expect(sequence.append(3)).toEqual({ finishReason: "length", stopReason: null });
    expect(sequence.finish).toEqual({ finishReason: "length", stopReason: null });
    expect(() => sequence.append(3)).toThrow(/finished/);
  });

  it("refuses bad_words without their token ids rather than ignoring them", () => {
    expect(() => new SequenceState({ params: defaultSamplingParams({ badWords: ["x"] }), promptTokenIds: [1], eosTokenId: 0 })).toThrow(/badWordsTokenIds/);
  });

  it("stops at the context length", () => {
    const sequence = new SequenceState({ params: defaultSamplingParams({ maxTokens: 50 }), promptTokenIds: [1, 2, 3], eosTokenId: 0, maxModelLen: 4 });
    expect(sequence.append(7)).toEqual({ finishReason: "length", stopReason: null });
  });

  it("gives seeded choices their own RNG (seed + index) and unseeded ones none", () => {
    const seeded = (choiceIndex: number, seed: number) => new SequenceState({ params: defaultSamplingParams({ seed }), promptTokenIds: [1], eosTokenId: 0, choiceIndex }).rng!.nextUint32();
    expect(seeded(1, 10)).toBe(seeded(0, 11));
    expect(seeded(0, 10)).not.toBe(seeded(1, 10));
    expect(new SequenceState({ params: defaultSamplingParams(), promptTokenIds: [1], eosTokenId: 0 }).rng).toBeNull();
  });
});
