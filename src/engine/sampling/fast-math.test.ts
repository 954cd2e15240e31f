import { describe, expect, it } from "vitest";
import { clampLogprob, expNonPositive, logSumExp, maxOf } from "./fast-math.js";

describe("expNonPositive", () => {
  it("matches Math.exp to a few ulps over the softmax range", () => {
    for (let i = 0; i <= 20_000; i++) {
      const x = -i * 0.0349;
      const exact = Math.exp(x);
      expect(Math.abs(expNonPositive(x) - exact)).toBeLessThanOrEqual(exact * 1e-15);
    }
    expect(expNonPositive(0)).toBe(1);
  });

  it("is 0 for -Infinity and far-negative inputs, and still right for positive ones", () => {
    expect(expNonPositive(-Infinity)).toBe(0);
    expect(expNonPositive(-800)).toBe(0);
    expect(expNonPositive(1)).toBeCloseTo(Math.E, 15);
  });
});

describe("logSumExp", () => {
  it("computes log Σ e^x stably", () => {
    const values = Float32Array.from([1000, 1000]);
    expect(logSumExp(values)).toBeCloseTo(1000 + Math.LN2, 10);
    expect(logSumExp(Float32Array.from([0, Math.log(3)]))).toBeCloseTo(Math.log(4), 6);
  });

  it("ignores -Infinity entries and handles a row that is all -Infinity", () => {
    expect(logSumExp(Float32Array.from([-Infinity, 0, -Infinity]))).toBe(0);
    expect(logSumExp(Float32Array.from([-Infinity, -Infinity]))).toBe(-Infinity);
    expect(maxOf(Float32Array.from([-3, 2, 1]))).toBe(2);
  });

  it("looks only at the first `length` values", () => {
    expect(logSumExp(Float32Array.from([0, 0, 100]), 2)).toBeCloseTo(Math.LN2, 10);
  });
});

describe("clampLogprob", () => {
  it("clamps -Infinity and very small logprobs to -9999", () => {
    expect(clampLogprob(-Infinity)).toBe(-9999);
    expect(clampLogprob(-12345)).toBe(-9999);
    expect(clampLogprob(-1.5)).toBe(-1.5);
  });
});
