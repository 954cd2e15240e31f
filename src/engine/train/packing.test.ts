import { describe, expect, it } from "vitest";
import { attentionMask, mayAttend, rowSegments } from "./attention.js";
import { numTrajectoriesInRow, rewardStdDevLearningRateMultiplier, rowLearningRate } from "./learning-rate.js";
import { rlLossInputs, withPrecalculatedLogprobs } from "./loss-inputs.js";
import { autoPackedSequenceLength, batchHasTrainableTokens, normalizeBatch, packTokenizedResults, type PackedBatch } from "./packing.js";
import type { TokenizedResult } from "./tokenize-groups.js";

function result(promptId: number, promptLength: number, tokenIds: number[], mask: number[], advantage: number, weight: number): TokenizedResult {
  return {
    tokenIds,
    assistantMask: mask,
    logprobs: mask.map((bit, i) => (bit ? -(i + 1) / 10 : NaN)),
    inputPos: tokenIds.map((_, i) => i),
    advantage,
    weight,
    promptId,
    promptLength,
    groupIndex: promptId - 1,
    trajectoryIndex: 0,
  };
}

// Group 1 shares [10, 11]; group 2 shares [40]. Trainable tokens: two with (A 2, w 1/2), three with (A -1, w 1/3).
const A = result(1, 2, [10, 11, 12, 20, 21, 22], [0, 0, 0, 0, 0, 1], 2, 0.5);
const B = result(1, 2, [10, 11, 12, 30, 31], [0, 0, 0, 0, 1], 2, 0.5);
const C = result(2, 1, [40, 41, 42, 43], [0, 0, 1, 1], -1, 1 / 3);
const D = result(2, 1, [40, 41, 44, 45], [0, 0, 0, 1], -1, 1 / 3);
const keepOrder = () => 0.999;

describe("packTokenizedResults", () => {
  const batch = packTokenizedResults([A, B, C, D], 10, { padTokenId: 99, random: keepOrder });
  const [first, second] = batch.rows;

  it("appends results in order, sharing a group prompt already in the row and closing rows that would overflow", () => {
    expect(batch.rows).toHaveLength(2);
    // Row 1: A whole, then B without its 2 prompt tokens (9 tokens); C (4 more) would overflow.
    expect([...first!.tokens]).toEqual([10, 11, 12, 20, 21, 22, 12, 30, 31, 99]);
    expect(first!.length).toBe(9);
    // Completion group ids are numbered after the prompt ids: A 3, B 4, C 5, D 6.
    expect([...first!.groupIds]).toEqual([1, 1, 3, 3, 3, 3, 4, 4, 4, -1]);
    expect([...first!.parentIds]).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, -1]);
    expect([...first!.inputPos]).toEqual([0, 1, 2, 3, 4, 5, 2, 3, 4, 0]);
    expect([...first!.assistantMask]).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 1, 0]);
    expect([...first!.logprobs]).toEqual([NaN, NaN, NaN, NaN, NaN, -0.6, NaN, NaN, -0.5, NaN]);
    expect([...second!.tokens]).toEqual([40, 41, 42, 43, 41, 44, 45, 99, 99, 99]);
    expect([...second!.groupIds]).toEqual([2, 5, 5, 5, 6, 6, 6, -1, -1, -1]);
    expect([...second!.parentIds]).toEqual([2, 2, 2, 2, 2, 2, 2, -1, -1, -1]);
    expect([...second!.inputPos]).toEqual([0, 1, 2, 3, 1, 2, 3, 0, 0, 0]);
  });

  it("normalises weights to mean 1 and advantages by mean |A|·w over the trainable tokens of the whole batch", () => {
    // scripts/reference/train_math.py, balance 0: w 1.25 / 0.8333…, A 1.3333… / -0.6666….
    expect(first!.weights[5]).toBeCloseTo(1.25, 12);
    expect(first!.advantages[5]).toBeCloseTo(1.3333333333333335, 12);
    expect(second!.weights[3]).toBeCloseTo(0.8333333333333334, 12);
    expect(second!.advantages[3]).toBeCloseTo(-0.6666666666666667, 12);
    // Non-trainable positions carry nothing.
    expect(first!.weights[4]).toBe(0);
    expect(first!.advantages[4]).toBe(0);
    expect(second!.advantages[9]).toBe(0);
  });

  it.each([
    // scripts/reference/train_math.py: advantage_balance 0.5 and -0.25.
    [0.5, 1.5999999999999996, -0.3999999999999999],
    [-0.25, 1.2000000000000002, -0.8000000000000002],
  ])("balances advantages with advantage_balance %d", (balance, positive, negative) => {
    const balanced = packTokenizedResults([A, B, C, D], 10, { padTokenId: 99, advantageBalance: balance, random: keepOrder });
    expect(balanced.rows[0]!.advantages[8]).toBeCloseTo(positive, 12);
    expect(balanced.rows[1]!.advantages[6]).toBeCloseTo(negative, 12);
  });

  it("leaves advantages zero when the balance removes every one of them", () => {
    const onlyNegative = packTokenizedResults([C, D], 10, { padTokenId: 0, advantageBalance: 1, random: keepOrder });
    expect([...onlyNegative.rows[0]!.advantages].every((value) => value === 0)).toBe(true);
    expect(onlyNegative.rows[0]!.weights[2]).toBeCloseTo(1, 12);
  });

  it("shuffles rows with the given random source", () => {
    const shuffled = packTokenizedResults([A, B, C, D], 10, { padTokenId: 99, random: () => 0 });
    expect(shuffled.rows[0]!.tokens[0]).toBe(40);
  });

  it("truncates an over-long result by default, or drops it, and skips results with nothing trainable past the prompt", () => {
    const long = result(3, 0, [1, 2, 3, 4, 5, 6], [0, 1, 1, 1, 1, 1], 1, 0.2);
    const truncated = packTokenizedResults([long, A], 4, { padTokenId: 0, random: keepOrder });
    expect(truncated.rows.map((row) => [...row.tokens])).toEqual([
      [1, 2, 3, 4],
      [10, 11, 12, 20],
    ]);
    expect(packTokenizedResults([long, B], 5, { padTokenId: 0, truncateLongResults: false, random: keepOrder }).rows.map((row) => [...row.tokens])).toEqual([[10, 11, 12, 30, 31]]);
    const promptOnly = result(4, 2, [1, 2, 3], [0, 1, 0], 1, 1);
    expect(packTokenizedResults([promptOnly], 8, { padTokenId: 0 }).rows).toHaveLength(0);
  });

  it("knows whether a batch has anything to train", () => {
    expect(batchHasTrainableTokens(batch, false)).toBe(true);
    const noLogprobs = { ...A, logprobs: A.tokenIds.map(() => NaN) };
    const blind = packTokenizedResults([noLogprobs], 8, { padTokenId: 0 });
    expect(batchHasTrainableTokens(blind, false)).toBe(false);
    expect(batchHasTrainableTokens(blind, true)).toBe(true);
  });

  it("rejects a non-positive sequence length", () => {
    expect(() => packTokenizedResults([A], 0, { padTokenId: 0 })).toThrow(RangeError);
  });
});

describe("normalizeBatch", () => {
  it("leaves a batch without trainable tokens alone", () => {
    const empty: PackedBatch = { sequenceLength: 0, rows: [] };
    normalizeBatch(empty, 0);
    expect(empty.rows).toEqual([]);
  });
});

describe("autoPackedSequenceLength", () => {
  it("rounds up to a multiple of 2048, capped at the model's maximum", () => {
    expect(autoPackedSequenceLength(1)).toBe(2048);
    expect(autoPackedSequenceLength(2048)).toBe(2048);
    expect(autoPackedSequenceLength(2049)).toBe(4096);
    expect(autoPackedSequenceLength(40_000)).toBe(32_768);
    expect(autoPackedSequenceLength(3000, 2500)).toBe(2500);
  });
});

describe("attention in a packed row", () => {
  const [row] = packTokenizedResults([A, B, C, D], 10, { padTokenId: 99, random: keepOrder }).rows;

  it("lets a completion see its own tokens and its shared prompt, never another completion", () => {
    // B's tokens (positions 6–8) see the prompt (0, 1) and themselves, not A's completion (2–5).
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8].filter((k) => mayAttend(row!, 7, k))).toEqual([0, 1, 6, 7]);
    expect([0, 1, 2, 3, 4, 5].filter((k) => mayAttend(row!, 4, k))).toEqual([0, 1, 2, 3, 4]);
    // The prompt sees only itself; nothing sees the future.
    expect([0, 1].filter((k) => mayAttend(row!, 1, k))).toEqual([0, 1]);
    expect(mayAttend(row!, 6, 7)).toBe(false);
  });

  it("describes the row as segments and as a dense mask", () => {
    expect(rowSegments(row!)).toEqual([
      { start: 0, end: 2, groupId: 1, parentId: 1 },
      { start: 2, end: 6, groupId: 3, parentId: 1 },
      { start: 6, end: 9, groupId: 4, parentId: 1 },
    ]);
    const mask = attentionMask(row!);
    expect(mask.length).toBe(81);
    expect(mask[7 * 9 + 1]).toBe(1);
    expect(mask[7 * 9 + 3]).toBe(0);
    // Rows 0–8 see 1, 2, 3, 4, 5, 6, 3, 4, 5 keys.
    expect(mask.reduce((a, b) => a + b, 0)).toBe(33);
  });
});

describe("learning rate per row", () => {
  const [first, second] = packTokenizedResults([A, B, C, D], 10, { padTokenId: 99, random: keepOrder }).rows;

  it("counts trajectories as distinct group ids minus distinct parent ids", () => {
    expect(numTrajectoriesInRow(first!)).toBe(2);
    expect(numTrajectoriesInRow(second!)).toBe(2);
    expect(rowLearningRate(1e-5, first!, 0.5)).toBeCloseTo(1e-5 * Math.SQRT2, 18);
    expect(rowLearningRate(1e-5, first!, 0)).toBe(1e-5);
    expect(rowLearningRate(1e-5, first!, 1, 0.5)).toBeCloseTo(1e-5, 18);
    // Results without shared prompt tokens can count K = 0; the rate then stays finite.
    const unshared = { groupIds: Int32Array.from([7, 7, 8, 8]), parentIds: Int32Array.from([1, 1, 2, 2]) };
    expect(numTrajectoriesInRow(unshared)).toBe(0);
    expect(rowLearningRate(1e-5, unshared, -1)).toBe(1e-5);
  });

  it("fits the reward std-dev history to scale the rate", () => {
    // scripts/reference/train_math.py: numpy polyfit over per-step means, (a·last + b) / b.
    const history = [
      { step: 1, value: 0.5 },
      { step: 2, value: 0.4 },
      { step: 2, value: 0.5 },
      { step: 3, value: 0.3 },
      { step: 5, value: 0.2 },
    ];
    expect(rewardStdDevLearningRateMultiplier(history)).toBeCloseTo(0.32098765432098797, 12);
    expect(rewardStdDevLearningRateMultiplier([{ step: 1, value: 0.5 }])).toBe(1);
    // A non-positive intercept keeps the prior.
    expect(
      rewardStdDevLearningRateMultiplier([
        { step: 1, value: 0.1 },
        { step: 2, value: 0.3 },
      ]),
    ).toBe(1);
  });
});

describe("rlLossInputs", () => {
  const [row] = packTokenizedResults([A, B, C, D], 10, { padTokenId: 99, random: keepOrder }).rows;

  it("shifts the row by one: position p describes the token at p + 1", () => {
    const inputs = rlLossInputs(row!);
    expect([...inputs.targets]).toEqual([11, 12, 20, 21, 22, 12, 30, 31, 0, 0]);
    expect([...inputs.mask]).toEqual([0, 0, 0, 0, 1, 0, 0, 1, 0, 0]);
    expect([...inputs.groupIds]).toEqual([1, 3, 3, 3, 3, 4, 4, 4, -1, 0]);
    expect(inputs.oldLogprobs[4]).toBe(-0.6);
    expect(inputs.weights[4]).toBeCloseTo(1.25, 12);
    expect(inputs.advantages[7]).toBeCloseTo(1.3333333333333335, 12);
  });

  it("swaps in precalculated old logprobs and keeps the sampler's as original", () => {
    const inputs = rlLossInputs(row!);
    const precalculated = withPrecalculatedLogprobs(inputs, new Float64Array(10).fill(-2));
    expect(precalculated.oldLogprobs[4]).toBe(-2);
    expect(precalculated.originalLogprobs![4]).toBe(-0.6);
    expect(() => withPrecalculatedLogprobs(inputs, new Float64Array(3))).toThrow(RangeError);
  });
});
