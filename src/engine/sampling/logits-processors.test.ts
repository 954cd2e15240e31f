import { describe, expect, it } from "vitest";
import { applyAllowedTokens, applyLogitBias, applyPenalties, applyTokenBitmask, banTokens } from "./logits-processors.js";
import { TokenHistory } from "./token-history.js";

const f32 = (values: number[]) => Float32Array.from(values);

describe("applyTokenBitmask", () => {
  it("forbids exactly the tokens whose bit is clear, and everything past the mask", () => {
    const logits = new Float32Array(70).fill(1);
    // word 0: tokens 0 and 3 allowed; word 1: all allowed; word 2 (tokens 64..69) missing from the mask.
    applyTokenBitmask(logits, 70, Int32Array.from([0b1001, -1]));
    const allowed = [...logits.keys()].filter((id) => logits[id] === 1);
    expect(allowed).toEqual([0, 3, ...Array.from({ length: 32 }, (_, i) => 32 + i)]);
  });

  it("reads bit 31 of a word like xgrammar's int32 layout", () => {
    const logits = new Float32Array(32).fill(0);
    applyTokenBitmask(logits, 32, Int32Array.from([1 << 31]));
    expect(logits[31]).toBe(0);
    expect(logits[30]).toBe(-Infinity);
  });
});

describe("applyAllowedTokens", () => {
  it("keeps only the listed tokens, with their values", () => {
    const logits = f32([1, 2, 3, 4, 5]);
    applyAllowedTokens(logits, 5, Int32Array.from([1, 3]), new Float32Array(5));
    expect([...logits]).toEqual([-Infinity, 2, -Infinity, 4, -Infinity]);
  });
});

describe("banTokens and applyLogitBias", () => {
  it("bans ids and adds biases, ignoring ids outside the logits", () => {
    const logits = f32([0, 1, 2]);
    banTokens(logits, 3, [2, 7]);
    applyLogitBias(
      logits,
      3,
      new Map([
        [0, 100],
        [1, -0.5],
        [9, 3],
      ]),
    );
    expect([...logits]).toEqual([100, 0.5, -Infinity]);
  });
});

describe("applyPenalties", () => {
  it("applies repetition to prompt and output, frequency and presence to output only", () => {
    // prompt: token 1; output: token 2 twice, token 3 once. Token 0 unseen.
    const history = new TokenHistory([1], true);
    for (const id of [2, 3, 2]) history.append(id);
    const logits = f32([2, 3, -1, 4]);
    applyPenalties(logits, 4, history, 2, 0.5, 0.25);
    // token 0: untouched. token 1 (prompt, positive): 3 / 2 = 1.5, no freq/presence.
    // token 2 (output ×2, negative): -1 * 2 - 0.5*2 - 0.25 = -3.25.
    // token 3 (output ×1, positive): 4 / 2 - 0.5 - 0.25 = 1.25.
    expect([...logits]).toEqual([2, 1.5, -3.25, 1.25]);
  });

  it("skips the repetition step when r = 1 and the others when f = p = 0", () => {
    const history = new TokenHistory([0], true);
    history.append(1);
    const logits = f32([5, 5]);
    applyPenalties(logits, 2, history, 1, 1, 0);
    expect([...logits]).toEqual([5, 4]);
    applyPenalties(logits, 2, history, 0.5, 0, 0);
    expect([...logits]).toEqual([10, 8]);
  });
});

describe("TokenHistory", () => {
  it("keeps distinct seen and output tokens with counts, incrementally", () => {
    const history = new TokenHistory([5, 5, 6], true);
    for (const id of [6, 7, 7, 7]) history.append(id);
    expect(history.seenTokens).toEqual([5, 6, 7]);
    expect(history.outputTokens).toEqual([6, 7]);
    expect(history.outputCounts.get(7)).toBe(3);
    expect(history.outputTokenIds).toEqual([6, 7, 7, 7]);
  });

  it("tracks nothing but the token list when penalties are neutral", () => {
    const history = new TokenHistory([1, 2], false);
    history.append(3);
    expect(history.seenTokens).toEqual([]);
    expect(history.outputTokenIds).toEqual([3]);
  });
});
