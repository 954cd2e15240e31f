import { describe, expect, it } from "vitest";
import { Rng } from "./rng.js";
import { argmax, kthLargest, selectNucleus, topKIndices } from "./select.js";

function randomValues(count: number, seed: number): Float32Array {
  const rng = Rng.fromSeed(seed);
  return Float32Array.from({ length: count }, () => Math.round(rng.nextFloat() * 200) / 10 - 10);
}

describe("argmax", () => {
  it("returns the first index of the maximum, or -1 when everything is -Infinity", () => {
    expect(argmax(Float32Array.from([1, 3, 3, 2]))).toBe(1);
    expect(argmax(Float32Array.from([-Infinity, -Infinity]))).toBe(-1);
    expect(argmax(Float32Array.from([-Infinity, -5]))).toBe(1);
  });
});

describe("topKIndices", () => {
  it("matches a full sort (value descending, then id ascending)", () => {
    const values = randomValues(5000, 1);
    const sorted = [...values.keys()].sort((a, b) => values[b]! - values[a]! || a - b);
    for (const k of [1, 5, 20, 137]) expect(topKIndices(values, k)).toEqual(sorted.slice(0, k));
    expect(topKIndices(values, 10_000)).toEqual(sorted);
  });

  it("breaks ties by the lower id", () => {
    expect(topKIndices(Float32Array.from([1, 2, 2, 2, 0]), 2)).toEqual([1, 2]);
  });
});

describe("kthLargest", () => {
  it("matches a full sort for every k", () => {
    const values = randomValues(301, 2);
    const descending = [...values].sort((a, b) => b - a);
    const scratch = new Float32Array(values.length);
    for (let k = 1; k <= values.length; k++) expect(kthLargest(values, k, scratch)).toBe(descending[k - 1]);
  });

  it("matches a full sort for large k too (the quickselect path)", () => {
    const values = randomValues(5000, 4);
    const descending = [...values].sort((a, b) => b - a);
    const scratch = new Float32Array(values.length);
    for (const k of [1024, 1025, 2500, 4999, 5000]) expect(kthLargest(values, k, scratch)).toBe(descending[k - 1]);
  });

  it("handles duplicates and -Infinity, and leaves the input alone", () => {
    const values = Float32Array.from([3, -Infinity, 3, 1, 3, -Infinity]);
    const copy = Float32Array.from(values);
    const scratch = new Float32Array(6);
    expect(kthLargest(values, 3, scratch)).toBe(3);
    expect(kthLargest(values, 4, scratch)).toBe(1);
    expect(kthLargest(values, 5, scratch)).toBe(-Infinity);
    expect(values).toEqual(copy);
    const many = new Float32Array(3000).fill(-Infinity);
    many[7] = 2;
    expect(kthLargest(many, 1, new Float32Array(3000))).toBe(2);
    expect(kthLargest(many, 2000, new Float32Array(3000))).toBe(-Infinity);
  });
});

describe("selectNucleus", () => {
  function nucleus(weights: number[], target: number): number[] {
    const ids = Int32Array.from(weights.keys());
    const w = Float64Array.from(weights);
    const kept = selectNucleus(ids, w, weights.length, target);
    return [...ids.subarray(0, kept)].sort((a, b) => a - b);
  }

  it("keeps the smallest heaviest-first prefix whose mass reaches the target", () => {
    // Weights 0.5, 0.2, 0.15, 0.1, 0.05 in shuffled order.
    const weights = [0.1, 0.5, 0.05, 0.2, 0.15];
    expect(nucleus(weights, 0.45)).toEqual([1]);
    expect(nucleus(weights, 0.55)).toEqual([1, 3]);
    expect(nucleus(weights, 0.8)).toEqual([1, 3, 4]);
    expect(nucleus(weights, 0.9)).toEqual([0, 1, 3, 4]);
    expect(nucleus(weights, 0.99)).toEqual([0, 1, 2, 3, 4]);
  });

  it("keeps a tie group at the boundary whole", () => {
    expect(nucleus([0.4, 0.2, 0.2, 0.2], 0.5)).toEqual([0, 1, 2, 3]);
    expect(nucleus([0.4, 0.2, 0.2, 0.1, 0.1], 0.7)).toEqual([0, 1, 2]);
  });

  it("matches a sort-based reference on large random inputs", () => {
    const rng = Rng.fromSeed(3);
    const weights = Array.from({ length: 3000 }, () => rng.nextFloat() ** 8);
    const total = weights.reduce((a, b) => a + b, 0);
    const order = [...weights.keys()].sort((a, b) => weights[b]! - weights[a]!);
    for (const p of [0.1, 0.5, 0.9, 0.99]) {
      const expected: number[] = [];
      let ahead = 0;
      for (const id of order) {
        if (ahead >= p * total) break;
        expected.push(id);
        ahead += weights[id]!;
      }
      expect(nucleus(weights, p * total)).toEqual(expected.sort((a, b) => a - b));
    }
  });
});
