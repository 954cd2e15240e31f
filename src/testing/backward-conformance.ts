import { describe, expect, it } from "vitest";
import { encodeFloats } from "../engine/checkpoint/dtype.js";
import type { Kernels } from "../engine/kernels/types.js";
import { logSumExp } from "../engine/sampling/fast-math.js";
import { Rng } from "../engine/sampling/rng.js";

function randomArray(rng: Rng, length: number, scale = 1): Float32Array {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = (2 * rng.nextFloat() - 1) * scale;
  return out;
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/**
 * The directional derivative of x ↦ ⟨dy, f(x)⟩ along `direction` by central differences: what
 * ⟨vjp(dy), direction⟩ must equal. `f` runs the forward kernel on a perturbed copy.
 */
function centralDifference(f: (x: Float32Array) => Float32Array, x: Float32Array, direction: Float32Array, dy: Float32Array, step: number): number {
  const plus = Float32Array.from(x, (value, i) => value + step * direction[i]!);
  const minus = Float32Array.from(x, (value, i) => value - step * direction[i]!);
  return (dot(dy, f(plus)) - dot(dy, f(minus))) / (2 * step);
}

function expectNear(actual: number, expected: number, relative: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(relative * Math.max(1, Math.abs(expected)));
}

/**
 * The suite every kernel backend runs for the training half of `Kernels`: each backward kernel is
 * the exact adjoint of its forward kernel (checked by central differences through that forward),
 * the plain products and the optimizer match a direct double-precision reference.
 */
export function describeBackwardConformance(name: string, create: () => Kernels): void {
  describe(`${name} backward kernels`, () => {
    const kernels = create();

    it("linearBackward is dY·W for every row and output remainder, overwriting or accumulating", () => {
      const rng = Rng.fromSeed(1);
      for (const [rows, outDim, inDim] of [
        [1, 4, 3],
        [3, 5, 7],
        [4, 8, 16],
        [7, 6, 9],
        [9, 13, 5],
      ] as const) {
        const w = randomArray(rng, outDim * inDim);
        const matrix = kernels.createMatrix(outDim, inDim, "F32", encodeFloats("F32", w));
        const dy = randomArray(rng, rows * outDim);
        const expected = new Float64Array(rows * inDim);
        for (let r = 0; r < rows; r++) for (let o = 0; o < outDim; o++) for (let i = 0; i < inDim; i++) expected[r * inDim + i] += dy[r * outDim + o]! * w[o * inDim + i]!;
        const dx = new Float32Array(rows * inDim).fill(NaN);
        kernels.linearBackward({ dx, dy, rows, w: matrix, accumulate: false });
        dx.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 5));
        kernels.linearBackward({ dx, dy, rows, w: matrix, accumulate: true });
        dx.forEach((value, i) => expect(value).toBeCloseTo(2 * expected[i]!, 5));
      }
    });

    it("gemm computes alpha·op(a)·op(b) for every transpose combination", () => {
      const rng = Rng.fromSeed(2);
      const [m, n, k] = [3, 5, 4];
      const a = randomArray(rng, m * k);
      const b = randomArray(rng, k * n);
      const at = new Float32Array(m * k);
      const bt = new Float32Array(k * n);
      for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) at[p * m + i] = a[i * k + p]!;
      for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) bt[j * k + p] = b[p * n + j]!;
      const expected = new Float64Array(m * n);
      for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) for (let p = 0; p < k; p++) expected[i * n + j] += 0.5 * a[i * k + p]! * b[p * n + j]!;
      for (const [transposeA, transposeB] of [
        [false, false],
        [false, true],
        [true, false],
        [true, true],
      ] as const) {
        const c = new Float32Array(m * n).fill(1);
        kernels.gemm(c, transposeA ? at : a, transposeB ? bt : b, m, n, k, { transposeA, transposeB, alpha: 0.5 });
        c.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 5));
        kernels.gemm(c, transposeA ? at : a, transposeB ? bt : b, m, n, k, { transposeA, transposeB, alpha: 0.5, accumulate: true });
        c.forEach((value, i) => expect(value).toBeCloseTo(2 * expected[i]!, 5));
      }
    });

    it("gemm gives a row the same bits alone as in a large batch (the LoRA products of sampler and trainer)", () => {
      const rng = Rng.fromSeed(12);
      const [m, n, k] = [96, 40, 200];
      const a = randomArray(rng, m * k);
      const b = randomArray(rng, n * k);
      const all = new Float32Array(m * n);
      kernels.gemm(all, a, b, m, n, k, { transposeB: true, alpha: 0.25 });
      for (const row of [0, 37, m - 1]) {
        const alone = new Float32Array(n);
        kernels.gemm(alone, a.subarray(row * k, (row + 1) * k), b, 1, n, k, { transposeB: true, alpha: 0.25 });
        expect(Array.from(alone)).toEqual(Array.from(all.subarray(row * n, (row + 1) * n)));
      }
      // And a large product in every layout against the double-precision reference.
      const bn = randomArray(rng, k * n);
      const expected = new Float64Array(m * n);
      for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) for (let j = 0; j < n; j++) expected[i * n + j] += a[i * k + p]! * bn[p * n + j]!;
      const c = new Float32Array(m * n);
      kernels.gemm(c, a, bn, m, n, k);
      c.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 3));
    });

    it("rmsNormBackward is the adjoint of rmsNorm's Jacobian", () => {
      const rng = Rng.fromSeed(3);
      const [rows, dim] = [3, 16];
      const x = randomArray(rng, rows * dim, 2);
      const weight = randomArray(rng, dim);
      const dy = randomArray(rng, rows * dim);
      const dx = new Float32Array(rows * dim);
      kernels.rmsNormBackward({ dx, dy, x, weight, rows, eps: 1e-6, accumulate: false });
      const f = (input: Float32Array) => {
        const out = new Float32Array(rows * dim);
        kernels.rmsNorm(out, input, weight, rows, 1e-6);
        return out;
      };
      for (let trial = 0; trial < 4; trial++) {
        const direction = randomArray(rng, rows * dim);
        expectNear(dot(dx, direction), centralDifference(f, x, direction, dy, 1e-2), 2e-3);
      }
      const accumulated = new Float32Array(rows * dim).fill(1);
      kernels.rmsNormBackward({ dx: accumulated, dy, x, weight, rows, eps: 1e-6, accumulate: true });
      accumulated.forEach((value, i) => expect(value).toBeCloseTo(dx[i]! + 1, 5));
    });

    it("rmsNormBackward adds the weight's gradient when asked, leaving dx the same", () => {
      const rng = Rng.fromSeed(7);
      const [rows, dim] = [4, 12];
      const x = randomArray(rng, rows * dim, 2);
      const weight = randomArray(rng, dim);
      const dy = randomArray(rng, rows * dim);
      const plain = new Float32Array(rows * dim);
      kernels.rmsNormBackward({ dx: plain, dy, x, weight, rows, eps: 1e-6, accumulate: false });
      const dx = new Float32Array(rows * dim);
      const dWeight = new Float32Array(dim).fill(0.25);
      kernels.rmsNormBackward({ dx, dy, x, weight, rows, eps: 1e-6, accumulate: false, dWeight });
      expect(dx).toEqual(plain);
      dWeight.forEach((_, i) => (dWeight[i] -= 0.25));
      const viaWeight = (w: Float32Array) => {
        const out = new Float32Array(rows * dim);
        kernels.rmsNorm(out, x, w, rows, 1e-6);
        return out;
      };
      for (let trial = 0; trial < 3; trial++) {
        const direction = randomArray(rng, dim);
        expectNear(dot(dWeight, direction), centralDifference(viaWeight, weight, direction, dy, 1e-2), 2e-3);
      }
    });

    it("linearWeightBackward adds dYᵀ·X to the weight gradient and Σ dY to the bias gradient", () => {
      const rng = Rng.fromSeed(8);
      for (const [rows, outDim, inDim] of [
        [1, 4, 3],
        [3, 5, 7],
        [6, 8, 16],
        [5, 9, 5],
      ] as const) {
        const dy = randomArray(rng, rows * outDim);
        const x = randomArray(rng, rows * inDim);
        const expectedWeight = new Float64Array(outDim * inDim);
        const expectedBias = new Float64Array(outDim);
        for (let r = 0; r < rows; r++) {
          for (let o = 0; o < outDim; o++) {
            expectedBias[o] += dy[r * outDim + o]!;
            for (let i = 0; i < inDim; i++) expectedWeight[o * inDim + i] += dy[r * outDim + o]! * x[r * inDim + i]!;
          }
        }
        const dWeight = new Float32Array(outDim * inDim).fill(1);
        const dBias = new Float32Array(outDim).fill(1);
        kernels.linearWeightBackward({ dWeight, dBias, dy, x, rows, outDim, inDim });
        dWeight.forEach((value, i) => expect(value).toBeCloseTo(1 + expectedWeight[i]!, 5));
        dBias.forEach((value, o) => expect(value).toBeCloseTo(1 + expectedBias[o]!, 5));
        const weightOnly = new Float32Array(outDim * inDim);
        kernels.linearWeightBackward({ dWeight: weightOnly, dy, x, rows, outDim, inDim });
        weightOnly.forEach((value, i) => expect(value).toBeCloseTo(expectedWeight[i]!, 5));
      }
    });

    it("linearBackward and linearWeightBackward are the adjoints of matmul (central differences)", () => {
      const rng = Rng.fromSeed(10);
      const [rows, outDim, inDim] = [5, 7, 9];
      const w = randomArray(rng, outDim * inDim);
      const bias = randomArray(rng, outDim);
      const x = randomArray(rng, rows * inDim);
      const dy = randomArray(rng, rows * outDim);
      const forward = (weights: Float32Array, input: Float32Array, b: Float32Array) => {
        const out = new Float32Array(rows * outDim);
        kernels.matmul(out, input, rows, kernels.createMatrix(outDim, inDim, "F32", encodeFloats("F32", weights)), b);
        return out;
      };
      const dx = new Float32Array(rows * inDim);
      kernels.linearBackward({ dx, dy, rows, w: kernels.createMatrix(outDim, inDim, "F32", encodeFloats("F32", w)) });
      const [dWeight, dBias] = [new Float32Array(outDim * inDim), new Float32Array(outDim)];
      kernels.linearWeightBackward({ dWeight, dBias, dy, x, rows, outDim, inDim });
      for (let trial = 0; trial < 3; trial++) {
        const [dirX, dirW, dirB] = [randomArray(rng, x.length), randomArray(rng, w.length), randomArray(rng, outDim)];
        expectNear(
          dot(dx, dirX),
          centralDifference((v) => forward(w, v, bias), x, dirX, dy, 1e-2),
          2e-3,
        );
        expectNear(
          dot(dWeight, dirW),
          centralDifference((v) => forward(v, x, bias), w, dirW, dy, 1e-2),
          2e-3,
        );
        expectNear(
          dot(dBias, dirB),
          centralDifference((v) => forward(w, x, v), bias, dirB, dy, 1e-2),
          2e-3,
        );
      }
    });

    it("embedBackward is the adjoint of embed, repeated ids adding up", () => {
      const rng = Rng.fromSeed(9);
      const [vocab, dim] = [7, 5];
      const ids = [3, 0, 3, 6];
      const dOut = randomArray(rng, ids.length * dim);
      const dTable = new Float32Array(vocab * dim);
      kernels.embedBackward(dTable, dOut, ids, dim);
      const table = randomArray(rng, vocab * dim);
      const direction = randomArray(rng, vocab * dim);
      const lookup = (values: Float32Array) => {
        const out = new Float32Array(ids.length * dim);
        kernels.embed(out, kernels.createMatrix(vocab, dim, "F32", encodeFloats("F32", values)), ids);
        return out;
      };
      expectNear(dot(dTable, direction), centralDifference(lookup, table, direction, dOut, 1e-2), 1e-4);
      expect(Array.from(dTable.subarray(1 * dim, 3 * dim))).toEqual(new Array(2 * dim).fill(0));
      expect(() => kernels.embedBackward(dTable, dOut, [vocab], dim)).toThrow(RangeError);
    });

    it("weightValues are the weights: after syncWeights the forward and the backward compute with what was written", () => {
      const values = Float32Array.of(1, 2, 3, 4, 5, 6);
      const matrix = kernels.createMatrix(2, 3, "F32", encodeFloats("F32", values));
      expect(Array.from(kernels.weightValues(matrix))).toEqual(Array.from(values));
      const dx = new Float32Array(3);
      kernels.linearBackward({ dx, dy: Float32Array.of(0, 1), rows: 1, w: matrix, accumulate: false });
      expect(Array.from(dx)).toEqual([4, 5, 6]);
      kernels.weightValues(matrix)[4] = 50;
      kernels.syncWeights();
      const out = new Float32Array(2);
      kernels.matmul(out, Float32Array.of(0, 1, 0), 1, matrix);
      expect(Array.from(out)).toEqual([2, 50]);
      kernels.linearBackward({ dx, dy: Float32Array.of(0, 1), rows: 1, w: matrix, accumulate: false });
      expect(Array.from(dx)).toEqual([4, 50, 6]);
    });

    it("ropeBackward is the transpose of rope", () => {
      const rng = Rng.fromSeed(4);
      const [rows, heads, headDim] = [3, 2, 8];
      const positions = Int32Array.of(0, 5, 2);
      const cos = new Float32Array(6 * (headDim / 2));
      const sin = new Float32Array(6 * (headDim / 2));
      for (let p = 0; p < 6; p++) for (let i = 0; i < headDim / 2; i++) [cos[p * 4 + i], sin[p * 4 + i]] = [Math.cos(p / (i + 1)), Math.sin(p / (i + 1))];
      const x = randomArray(rng, rows * heads * headDim);
      const dy = randomArray(rng, rows * heads * headDim);
      const rotated = x.slice();
      kernels.rope({ x: rotated, rows, heads, headDim, positions, cos, sin });
      const dx = dy.slice();
      kernels.ropeBackward({ x: dx, rows, heads, headDim, positions, cos, sin });
      expect(dot(dx, x)).toBeCloseTo(dot(dy, rotated), 5);
    });

    it("siluMulBackward gives the gradients of silu(gate)·up", () => {
      const rng = Rng.fromSeed(5);
      const length = 24;
      const gate = randomArray(rng, length, 4);
      const up = randomArray(rng, length, 2);
      const dOut = randomArray(rng, length);
      const dGate = new Float32Array(length);
      const dUp = new Float32Array(length);
      kernels.siluMulBackward({ dGate, dUp, dOut, gate, up, length });
      const direction = randomArray(rng, length);
      const viaGate = (g: Float32Array) => {
        const out = new Float32Array(length);
        kernels.siluMul(out, g, up, length);
        return out;
      };
      const viaUp = (u: Float32Array) => {
        const out = new Float32Array(length);
        kernels.siluMul(out, gate, u, length);
        return out;
      };
      expectNear(dot(dGate, direction), centralDifference(viaGate, gate, direction, dOut, 1e-2), 2e-3);
      expectNear(dot(dUp, direction), centralDifference(viaUp, up, direction, dOut, 1e-2), 2e-3);
    });

    it("attentionBackward gives the gradients of grouped-query attention for queries, keys and values", () => {
      const rng = Rng.fromSeed(6);
      const shape = { heads: 4, kvHeads: 2, headDim: 8 };
      // A short run after a prefix, and one long enough to span several blocks of query rows.
      for (const [rows, start] of [
        [3, 4],
        [45, 6],
      ] as const) {
        const kvSize = (start + rows) * shape.kvHeads * shape.headDim;
        const q = randomArray(rng, rows * shape.heads * shape.headDim, 1.5);
        const keys = randomArray(rng, kvSize, 1.5);
        const values = randomArray(rng, kvSize);
        const dOut = randomArray(rng, rows * shape.heads * shape.headDim);
        const dq = new Float32Array(q.length);
        const dKeys = new Float32Array(kvSize).fill(0.5);
        const dValues = new Float32Array(kvSize).fill(0.5);
        kernels.attentionBackward({ dq, dKeys, dValues, dOut, q, keys, values, rows, start, shape });
        // Keys and values gradients are added to what the buffers held.
        dKeys.forEach((_, i) => (dKeys[i] -= 0.5));
        dValues.forEach((_, i) => (dValues[i] -= 0.5));
        const run = (qs: Float32Array, ks: Float32Array, vs: Float32Array) => {
          const out = new Float32Array(q.length);
          kernels.attention({ out, q: qs, rows, keys: ks, values: vs, start, shape });
          return out;
        };
        for (let trial = 0; trial < 3; trial++) {
          const dirQ = randomArray(rng, q.length);
          const dirK = randomArray(rng, kvSize);
          const dirV = randomArray(rng, kvSize);
          expectNear(
            dot(dq, dirQ),
            centralDifference((x) => run(x, keys, values), q, dirQ, dOut, 1e-2),
            2e-3,
          );
          expectNear(
            dot(dKeys, dirK),
            centralDifference((x) => run(q, x, values), keys, dirK, dOut, 1e-2),
            2e-3,
          );
          expectNear(
            dot(dValues, dirV),
            centralDifference((x) => run(q, keys, x), values, dirV, dOut, 1e-2),
            2e-3,
          );
        }
      }
    });

    it("tokenLogprobs equals the sampler's log-sum-exp bit for bit, and its backward is the adjoint", () => {
      const rng = Rng.fromSeed(31);
      const [rows, vocab] = [5, 300];
      const logits = randomArray(rng, rows * vocab, 8);
      logits[7] = -Infinity; // a masked logit in row 0 (its entropy is NaN: the trainer's logits are always finite)
      const targets = Int32Array.from({ length: rows }, (_, r) => (r * 61) % vocab);
      const [normalizers, logprobs, entropies] = [new Float64Array(rows), new Float64Array(rows), new Float64Array(rows)];
      kernels.tokenLogprobs({ logits, rows, vocab, targets, normalizers, logprobs, entropies });
      for (let r = 0; r < rows; r++) {
        const row = logits.subarray(r * vocab, (r + 1) * vocab);
        expect(normalizers[r]).toBe(logSumExp(row));
        expect(logprobs[r]).toBe(row[targets[r]!]! - logSumExp(row));
        if (r === 0) continue;
        let entropy = 0;
        for (let j = 0; j < vocab; j++) {
          const p = Math.exp(row[j]! - normalizers[r]!);
          if (p > 0) entropy -= p * (row[j]! - normalizers[r]!);
        }
        expect(entropies[r]).toBeCloseTo(entropy, 9);
      }
      // ℓ as a function of the logits, for finite differences (no -Infinity on this path).
      const finite = randomArray(rng, rows * vocab, 3);
      const logprobsOf = (x: Float32Array) => {
        const out = new Float64Array(rows);
        kernels.tokenLogprobs({ logits: x, rows, vocab, targets, normalizers: new Float64Array(rows), logprobs: out, entropies: new Float64Array(rows) });
        return Float32Array.from(out);
      };
      kernels.tokenLogprobs({ logits: finite, rows, vocab, targets, normalizers, logprobs, entropies });
      const gradients = Float64Array.from(randomArray(rng, rows));
      const dLogits = Float32Array.from(finite);
      kernels.tokenLogprobsBackward({ logits: dLogits, rows, vocab, targets, normalizers, gradients });
      for (let trial = 0; trial < 3; trial++) {
        const direction = randomArray(rng, rows * vocab);
        expectNear(dot(dLogits, direction), centralDifference(logprobsOf, finite, direction, Float32Array.from(gradients), 1e-2), 2e-3);
      }
      expect(() => kernels.tokenLogprobs({ logits, rows: 1, vocab, targets: Int32Array.of(vocab), normalizers, logprobs, entropies })).toThrow(/outside the vocabulary/);
    });

    it("adamwStep matches torch.optim.AdamW's update and counts non-finite weights", () => {
      const rng = Rng.fromSeed(32);
      const size = 40_000; // more than one block of the native kernel
      const params = randomArray(rng, size);
      const grads = randomArray(rng, size, 0.1);
      const [expAvg, expAvgSq] = [randomArray(rng, size, 0.01), Float32Array.from(randomArray(rng, size, 0.01), Math.abs)];
      const [lr, step, beta1, beta2, eps, weightDecay] = [1e-3, 3, 0.9, 0.99, 1e-8, 0.1];
      const expected = params.map((p, j) => {
        const m = beta1 * expAvg[j]! + (1 - beta1) * grads[j]!;
        const v = beta2 * expAvgSq[j]! + (1 - beta2) * grads[j]! ** 2;
        return p * (1 - lr * weightDecay) - ((lr / (1 - beta1 ** step)) * m) / (Math.sqrt(v) / Math.sqrt(1 - beta2 ** step) + eps);
      });
      const nonFinite = kernels.adamwStep({ params, grads, expAvg, expAvgSq, lr, step, beta1, beta2, eps, weightDecay });
      expect(nonFinite).toBe(0);
      expect(Array.from(params)).toEqual(Array.from(expected));
      grads[5] = NaN;
      expect(kernels.adamwStep({ params, grads, expAvg, expAvgSq, lr, step: 4, beta1, beta2, eps, weightDecay })).toBe(1);
      expect(() => kernels.adamwStep({ params, grads: grads.subarray(1), expAvg, expAvgSq, lr, step, beta1, beta2, eps, weightDecay })).toThrow(/one length/);
    });

    it("sumOfSquares and scale are the gradient clipping's two passes", () => {
      const rng = Rng.fromSeed(33);
      const x = randomArray(rng, 50_000);
      let expected = 0;
      for (const value of x) expected += value * value;
      expect(kernels.sumOfSquares(x)).toBeCloseTo(expected, 8);
      const copy = Float32Array.from(x);
      kernels.scale(copy, 0.3);
      expect(Array.from(copy)).toEqual(Array.from(x, (value) => Math.fround(value * 0.3)));
    });
  });
}
