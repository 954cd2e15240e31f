import { describe, expect, it } from "vitest";
import { choiceSeed, Rng } from "./rng.js";

function draws(rng: Rng, count: number): number[] {
  return Array.from({ length: count }, () => rng.nextUint32());
}

describe("Rng", () => {
  it("gives the same stream for the same seed and different streams for different seeds", () => {
    expect(draws(Rng.fromSeed(42), 8)).toEqual(draws(Rng.fromSeed(42), 8));
    expect(draws(Rng.fromSeed(42), 8)).not.toEqual(draws(Rng.fromSeed(43), 8));
    expect(draws(Rng.fromSeed(-1), 8)).not.toEqual(draws(Rng.fromSeed(0), 8));
  });

  it("is pinned to fixed values, so streams cannot drift between versions or platforms", () => {
    // Reference values: SplitMix64 seeding of xoshiro128**, computed independently in Python.
    expect(draws(Rng.fromSeed(0), 4)).toEqual(PINNED_SEED_0);
  });

  it("accepts the whole signed 64-bit range and wraps like two's complement", () => {
    expect(draws(Rng.fromSeed(-(2n ** 63n)), 4)).toEqual(draws(Rng.fromSeed(2n ** 63n), 4));
    expect(draws(Rng.fromSeed(-1), 4)).toEqual(draws(Rng.fromSeed(2n ** 64n - 1n), 4));
    // biome-ignore lint/correctness/noPrecisionLoss: a seed past 2^53 as a client sends it
    expect(() => Rng.fromSeed(9223372036854775807)).not.toThrow();
  });

  it("derives choice seeds as seed + index", () => {
    expect(choiceSeed(7, 0)).toBe(7n);
    expect(choiceSeed(7, 3)).toBe(10n);
    expect(choiceSeed(-2, 5)).toBe(3n);
  });

  it("produces uniform floats in [0, 1)", () => {
    const rng = Rng.fromSeed(1234);
    const buckets = new Array(10).fill(0);
    const count = 50_000;
    let sum = 0;
    let min = 1;
    let max = 0;
    for (let i = 0; i < count; i++) {
      const x = rng.nextFloat();
      min = Math.min(min, x);
      max = Math.max(max, x);
      sum += x;
      buckets[Math.floor(x * 10)]++;
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(1);
    expect(sum / count).toBeCloseTo(0.5, 2);
    for (const bucket of buckets) expect(Math.abs(bucket / count - 0.1)).toBeLessThan(0.01);
  });

  it("seeds the shared generator from entropy", () => {
    expect(draws(Rng.fromEntropy(), 4)).not.toEqual(draws(Rng.fromEntropy(), 4));
  });
});

const PINNED_SEED_0 = [3737715805, 2584255861, 2876756834, 3286328325];
