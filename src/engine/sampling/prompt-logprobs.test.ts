import { describe, expect, it } from "vitest";
import { computePromptLogprobs } from "./prompt-logprobs.js";

describe("computePromptLogprobs", () => {
  // Vocabulary of 4; rows are the model outputs after prompt tokens 0 and 1.
  const rows = [Float32Array.from([Math.log(0.5), Math.log(0.3), Math.log(0.2), -Infinity]), Float32Array.from([0, 0, Math.log(2), 0])];
  const prompt = [3, 1, 2];

  it("starts with null, then scores each token with its rank and the top N", () => {
    const result = computePromptLogprobs(prompt, (j) => rows[j]!, 2);
    expect(result).toHaveLength(3);
    expect(result[0]).toBeNull();
    const first = result[1]!;
    expect(first.actual.tokenId).toBe(1);
    expect(first.actual.logprob).toBeCloseTo(Math.log(0.3), 6);
    expect(first.actual.rank).toBe(2);
    expect(first.top.map((t) => [t.tokenId, t.rank])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(first.top[0]!.logprob).toBeCloseTo(Math.log(0.5), 6);
    const second = result[2]!;
    expect(second.actual).toMatchObject({ tokenId: 2, rank: 1 });
    expect(second.actual.logprob).toBeCloseTo(Math.log(2 / 5), 6);
  });

  it("returns only the actual token for N = 0, the whole vocabulary for -1, and clamps -Infinity", () => {
    expect(computePromptLogprobs(prompt, (j) => rows[j]!, 0)[1]!.top).toEqual([]);
    const whole = computePromptLogprobs([0, 3], (j) => rows[j]!, -1)[1]!;
    expect(whole.top.map((t) => t.tokenId)).toEqual([0, 1, 2, 3]);
    expect(whole.actual).toEqual({ tokenId: 3, logprob: -9999, rank: 4 });
  });

  it("ranks a token tied with others behind all of them (count of logprobs ≥ its own)", () => {
    const result = computePromptLogprobs([0, 1], () => Float32Array.from([1, 1, 1, 0]), 1);
    expect(result[1]!.actual.rank).toBe(3);
  });

  it("handles one-token and empty prompts", () => {
    expect(computePromptLogprobs([5], () => new Float32Array(4), 1)).toEqual([null]);
    expect(computePromptLogprobs([], () => new Float32Array(4), 1)).toEqual([]);
  });
});
