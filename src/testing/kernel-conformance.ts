import { describe, expect, it } from "vitest";
import { encodeFloats } from "../engine/checkpoint/dtype.js";
import { SeededRandom } from "../engine/fixtures/random.js";
import type { Kernels } from "../engine/kernels/types.js";
import { describeBatchInvariance } from "./batch-invariance.js";

/**
 * A kernel backend's conformance suite: every kernel against a naive double-precision
 * formulation, on shapes that hit blocked loops and their remainders, and batch invariance
 * (`describeBatchInvariance`). Any backend (the TS reference, the native addon) runs it with
 * `describeKernelConformance(name, () => kernels)`.
 */
export function describeKernelConformance(name: string, makeKernels: () => Kernels, tolerance = 1e-5): void {
  const random = new SeededRandom(42);
  const values = (count: number, scale = 1) => random.uniform(count, scale);
  const close = (actual: ArrayLike<number>, expected: ArrayLike<number>) => {
    expect(actual.length).toBe(expected.length);
    let worst = 0;
    for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!) / Math.max(1, Math.abs(expected[i]!)));
    expect(worst).toBeLessThan(tolerance);
  };

  describe(`${name} kernels`, () => {
    const kernels = makeKernels();

    it("matmul: rows × Wᵀ + bias, for every row count and odd widths", () => {
      for (const [rows, inDim, outDim] of [
        [1, 7, 5],
        [3, 16, 9],
        [4, 33, 2],
        [9, 64, 17],
      ] as const) {
        const x = values(rows * inDim);
        const weights = values(outDim * inDim);
        const bias = values(outDim);
        const w = kernels.createMatrix(outDim, inDim, "F32", encodeFloats("F32", weights));
        expect({ rows: w.rows, cols: w.cols }).toEqual({ rows: outDim, cols: inDim });
        const expected = new Float64Array(rows * outDim);
        for (let r = 0; r < rows; r++) {
          for (let o = 0; o < outDim; o++) {
            let sum = bias[o]!;
            for (let i = 0; i < inDim; i++) sum += x[r * inDim + i]! * weights[o * inDim + i]!;
            expected[r * outDim + o] = sum;
          }
        }
        const out = new Float32Array(rows * outDim);
        kernels.matmul(out, x, rows, w, bias);
        close(out, expected);
        kernels.matmul(out, x, rows, w);
        close(
          out,
          expected.map((value, i) => value - bias[i % outDim]!),
        );
      }
    });

    it("matmul and embed read f16 and bf16 weights", () => {
      const weights = Float32Array.of(1, -2, 0.5, 3, 0.25, -1.5);
      const x = Float32Array.of(1, 1, 1, 2, 0, -1);
      for (const dtype of ["F16", "BF16"] as const) {
        const w = kernels.createMatrix(2, 3, dtype, encodeFloats(dtype, weights));
        const out = new Float32Array(4);
        kernels.matmul(out, x, 2, w);
        close(out, [-0.5, 1.75, 1.5, 7.5]);
        const rows = new Float32Array(6);
        kernels.embed(rows, w, [1, 0]);
        close(rows, [3, 0.25, -1.5, 1, -2, 0.5]);
      }
    });

    it("embed rejects ids outside the table", () => {
      const table = kernels.createMatrix(3, 2, "F32", encodeFloats("F32", values(6)));
      expect(() => kernels.embed(new Float32Array(2), table, [3])).toThrow(RangeError);
    });

    it("rmsNorm: x / sqrt(mean(x²) + eps) · weight, in place too", () => {
      const dim = 10;
      const rows = 3;
      const x = values(rows * dim, 3);
      const weight = values(dim);
      const expected = new Float64Array(rows * dim);
      for (let r = 0; r < rows; r++) {
        let mean = 0;
        for (let i = 0; i < dim; i++) mean += x[r * dim + i]! ** 2 / dim;
        for (let i = 0; i < dim; i++) expected[r * dim + i] = (x[r * dim + i]! / Math.sqrt(mean + 1e-5)) * weight[i]!;
      }
      const out = new Float32Array(rows * dim);
      kernels.rmsNorm(out, x, weight, rows, 1e-5);
      close(out, expected);
      kernels.rmsNorm(x, x, weight, rows, 1e-5);
      close(x, expected);
    });

    it("rope: rotates (i, i + d/2) pairs by position × frequency", () => {
      const [rows, heads, headDim] = [3, 2, 8];
      const half = headDim / 2;
      const positions = Int32Array.of(0, 5, 2);
      const frequencies = [1, 0.3, 0.01, 0.001];
      const cos = new Float32Array(6 * half);
      const sin = new Float32Array(6 * half);
      for (let p = 0; p < 6; p++) {
        for (let i = 0; i < half; i++) {
          cos[p * half + i] = Math.cos(p * frequencies[i]!);
          sin[p * half + i] = Math.sin(p * frequencies[i]!);
        }
      }
      const x = values(rows * heads * headDim);
      const expected = new Float64Array(x.length);
      for (let r = 0; r < rows; r++) {
        for (let h = 0; h < heads; h++) {
          const base = (r * heads + h) * headDim;
          for (let i = 0; i < half; i++) {
            const angle = positions[r]! * frequencies[i]!;
            expected[base + i] = x[base + i]! * Math.cos(angle) - x[base + i + half]! * Math.sin(angle);
            expected[base + i + half] = x[base + i + half]! * Math.cos(angle) + x[base + i]! * Math.sin(angle);
          }
        }
      }
      kernels.rope({ x, rows, heads, headDim, positions, cos, sin });
      close(x, expected);
    });

    it("attention: causal grouped-query softmax attention over a cache", () => {
      const shape = { heads: 4, kvHeads: 2, headDim: 6 };
      const [start, rows] = [5, 3];
      const total = start + rows;
      const kvWidth = shape.kvHeads * shape.headDim;
      const keys = values(total * kvWidth + kvWidth, 2); // one spare position beyond the visible ones
      const vals = values(total * kvWidth + kvWidth);
      const q = values(rows * shape.heads * shape.headDim, 2);
      const expected = new Float64Array(q.length);
      for (let r = 0; r < rows; r++) {
        for (let h = 0; h < shape.heads; h++) {
          const kvHead = Math.floor(h / (shape.heads / shape.kvHeads));
          const scores: number[] = [];
          for (let j = 0; j <= start + r; j++) {
            let dot = 0;
            for (let d = 0; d < shape.headDim; d++) dot += q[(r * shape.heads + h) * shape.headDim + d]! * keys[j * kvWidth + kvHead * shape.headDim + d]!;
            scores.push(dot / Math.sqrt(shape.headDim));
          }
          const exps = scores.map((s) => Math.exp(s));
          const sum = exps.reduce((a, b) => a + b, 0);
          for (let d = 0; d < shape.headDim; d++) {
            let value = 0;
            for (let j = 0; j < exps.length; j++) value += (exps[j]! / sum) * vals[j * kvWidth + kvHead * shape.headDim + d]!;
            expected[(r * shape.heads + h) * shape.headDim + d] = value;
          }
        }
      }
      const out = new Float32Array(q.length);
      kernels.attention({ out, q, rows, keys, values: vals, start, shape });
      close(out, expected);
    });

    it("siluMul and addInPlace", () => {
      const gate = values(9, 4);
      const up = values(9);
      const out = new Float32Array(9);
      kernels.siluMul(out, gate, up, 9);
      close(
        out,
        [...gate].map((g, i) => (g / (1 + Math.exp(-g))) * up[i]!),
      );
      const x = Float32Array.from(up);
      kernels.addInPlace(x, gate, 9);
      close(
        x,
        [...up].map((u, i) => u + gate[i]!),
      );
    });
  });
  describeBatchInvariance(name, makeKernels);
}
