import { describe, expect, it } from "vitest";
import { describeNative } from "../../../testing/native.js";
import { describeBackwardConformance } from "../../../testing/backward-conformance.js";
import { decodeFloats, encodeFloats } from "../../checkpoint/dtype.js";
import { Rng } from "../../sampling/rng.js";
import { TsKernels } from "../ts/index.js";
import type { Kernels } from "../types.js";
import { SIMD_LEVELS } from "./addon.js";
import { NativeKernels } from "./index.js";

function randomArray(rng: Rng, length: number, scale = 1): Float32Array {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = (2 * rng.nextFloat() - 1) * scale;
  return out;
}

/** Largest |a − b| / max(1, |b|). */
function worstError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!) / Math.max(1, Math.abs(expected[i]!)));
  return worst;
}

describeNative("native backward kernels", (addon) => {
  const levels = SIMD_LEVELS.slice(SIMD_LEVELS.indexOf(addon.bestSimd as (typeof SIMD_LEVELS)[number]));
  for (const simd of levels) describeBackwardConformance(`native ${simd}, 2 threads`, () => new NativeKernels(addon, { threads: 2, simd }));
  describeBackwardConformance("native, 1 thread", () => new NativeKernels(addon, { threads: 1 }));

  describe.each(levels)("against the TypeScript reference at model sizes (%s)", (simd) => {
    const native = new NativeKernels(addon, { threads: 3, simd });
    const ts = new TsKernels();

    it.each(["BF16", "F16", "F32"] as const)("linear backward of a %s weight (input and weight gradients)", (dtype) => {
      const rng = Rng.fromSeed(21);
      // Rows past one 256-row chunk of the weight gradient; outputs and inputs not multiples of its
      // blocks, nor of the 16-row panels Wᵀ is packed in.
      const [rows, outDim, inDim] = [300, 200, 136];
      const w = randomArray(rng, outDim * inDim);
      const bytes = encodeFloats(dtype, w);
      const [wn, wt] = [native.createMatrix(outDim, inDim, dtype, bytes), ts.createMatrix(outDim, inDim, dtype, bytes)];
      const dy = randomArray(rng, rows * outDim);
      const x = randomArray(rng, rows * inDim);
      const [dxN, dxT] = [new Float32Array(rows * inDim).fill(1), new Float32Array(rows * inDim).fill(1)];
      native.linearBackward({ dx: dxN, dy, rows, w: wn, accumulate: true });
      ts.linearBackward({ dx: dxT, dy, rows, w: wt, accumulate: true });
      expect(worstError(dxN, dxT)).toBeLessThan(1e-5);
      const [dwN, dwT] = [new Float32Array(outDim * inDim), new Float32Array(outDim * inDim)];
      const [dbN, dbT] = [new Float32Array(outDim), new Float32Array(outDim)];
      native.linearWeightBackward({ dWeight: dwN, dBias: dbN, dy, x, rows, outDim, inDim });
      ts.linearWeightBackward({ dWeight: dwT, dBias: dbT, dy, x, rows, outDim, inDim });
      expect(worstError(dwN, dwT)).toBeLessThan(1e-5);
      expect(worstError(dbN, dbT)).toBeLessThan(1e-5);
      // Each weight gradient is one chain over the rows: one thread gives the same bits as three.
      const [dwOne, dbOne] = [new Float32Array(outDim * inDim), new Float32Array(outDim)];
      new NativeKernels(addon, { threads: 1, simd }).linearWeightBackward({ dWeight: dwOne, dBias: dbOne, dy, x, rows, outDim, inDim });
      expect(Buffer.from(dwOne.buffer).equals(Buffer.from(dwN.buffer))).toBe(true);
      expect(Buffer.from(dbOne.buffer).equals(Buffer.from(dbN.buffer))).toBe(true);
    });

    // A frozen 16-bit weight keeps its Wᵀ in its own dtype: the same values as the f32 Wᵀ it had,
    // so the same input gradients, bit for bit, on the direct (few rows) and widened paths.
    it.each(["BF16", "F16"] as const)("linear backward of a frozen %s weight equals it on the f32 copy, bit for bit", (dtype) => {
      const rng = Rng.fromSeed(23);
      const [outDim, inDim] = [200, 136];
      const bytes = encodeFloats(dtype, randomArray(rng, outDim * inDim));
      const sixteen = native.createMatrix(outDim, inDim, dtype, bytes);
      const widened = native.createMatrix(outDim, inDim, "F32", encodeFloats("F32", decodeFloats(dtype, bytes)));
      for (const rows of [1, 5, 17, 300]) {
        const dy = randomArray(rng, rows * outDim);
        const start = randomArray(rng, rows * inDim);
        const [a, b] = [start.slice(), start.slice()];
        native.linearBackward({ dx: a, dy, rows, w: sixteen, accumulate: true });
        native.linearBackward({ dx: b, dy, rows, w: widened, accumulate: true });
        expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
      }
      const transposed = new addon.Matrix(native.handle(sixteen), dtype);
      expect(transposed.byteLength).toBe(new addon.Matrix(native.handle(widened), "F32").byteLength / 2);
      expect(() => new addon.Matrix(native.handle(sixteen), dtype === "BF16" ? "F16" : "BF16")).toThrow(/f32 or its source's dtype/);
    });

    it("gives a weight that training starts to update an f32 Wᵀ of its new values", () => {
      const rng = Rng.fromSeed(29);
      const [outDim, inDim, rows] = [40, 24, 9];
      const kernels = new NativeKernels(addon, { threads: 2, simd });
      const w = kernels.createMatrix(outDim, inDim, "BF16", encodeFloats("BF16", randomArray(rng, outDim * inDim)));
      const dy = randomArray(rng, rows * outDim);
      kernels.linearBackward({ dx: new Float32Array(rows * inDim), dy, rows, w }); // a frozen, 16-bit Wᵀ first
      const values = kernels.weightValues(w);
      for (let i = 0; i < values.length; i++) values[i] = values[i]! * 1.5 + 1e-3; // not representable in bf16
      kernels.syncWeights();
      const [dx, expected] = [new Float32Array(rows * inDim), new Float32Array(rows * inDim)];
      kernels.linearBackward({ dx, dy, rows, w });
      ts.linearBackward({ dx: expected, dy, rows, w: ts.createMatrix(outDim, inDim, "F32", encodeFloats("F32", values)) });
      expect(worstError(dx, expected)).toBeLessThan(1e-5);
    });

    // Rows past one block of the AVX-512 kernel's 16 and no multiple of it; keys no multiple of 16.
    it.each([32, 64, 128])("attention backward with head size %i over a prefix, the same bits on 1 and 3 threads", (headDim) => {
      const rng = Rng.fromSeed(22);
      const shape = { heads: 6, kvHeads: 2, headDim };
      const [rows, start] = [90, 17];
      const kvSize = (start + rows) * shape.kvHeads * shape.headDim;
      const q = randomArray(rng, rows * shape.heads * shape.headDim);
      const keys = randomArray(rng, kvSize);
      const values = randomArray(rng, kvSize);
      const dOut = randomArray(rng, q.length);
      const run = (kernels: Kernels) => {
        const dq = new Float32Array(q.length);
        const [dk, dv] = [new Float32Array(kvSize).fill(0.25), new Float32Array(kvSize).fill(0.25)];
        kernels.attentionBackward({ dq, dKeys: dk, dValues: dv, dOut, q, keys, values, rows, start, shape });
        return [dq, dk, dv] as const;
      };
      const [n, t] = [run(native), run(ts)];
      for (let i = 0; i < 3; i++) expect(worstError(n[i]!, t[i]!)).toBeLessThan(2e-5);
      const one = run(new NativeKernels(addon, { threads: 1, simd }));
      for (let i = 0; i < 3; i++) expect(Buffer.from(one[i]!.buffer).equals(Buffer.from(n[i]!.buffer))).toBe(true);
    });

    it("elementwise backward kernels on long buffers", () => {
      const rng = Rng.fromSeed(23);
      const [rows, dim] = [64, 896];
      const x = randomArray(rng, rows * dim, 3);
      const dy = randomArray(rng, rows * dim);
      const weight = randomArray(rng, dim);
      const [dxN, dxT] = [new Float32Array(rows * dim), new Float32Array(rows * dim)];
      const [dwN, dwT] = [new Float32Array(dim), new Float32Array(dim)];
      native.rmsNormBackward({ dx: dxN, dy, x, weight, rows, eps: 1e-6, accumulate: false, dWeight: dwN });
      ts.rmsNormBackward({ dx: dxT, dy, x, weight, rows, eps: 1e-6, accumulate: false, dWeight: dwT });
      expect(worstError(dxN, dxT)).toBeLessThan(1e-5);
      expect(worstError(dwN, dwT)).toBeLessThan(1e-5);
      const [dgN, duN, dgT, duT] = [0, 0, 0, 0].map(() => new Float32Array(rows * dim));
      native.siluMulBackward({ dGate: dgN!, dUp: duN!, dOut: dy, gate: x, up: x, length: rows * dim });
      ts.siluMulBackward({ dGate: dgT!, dUp: duT!, dOut: dy, gate: x, up: x, length: rows * dim });
      expect(worstError(dgN!, dgT!)).toBeLessThan(1e-5);
      expect(worstError(duN!, duT!)).toBeLessThan(1e-5);
    });

    // The forward's sums must equal the sampler's bit for bit; the backward has no bits to match, and
    // AVX-512 computes its exps in f32 (the gradient is f32 anyway): within a few f32 ulps.
    it("log-softmax over a Qwen-sized vocabulary gives the reference's bits forward and its gradient within f32 rounding", () => {
      const rng = Rng.fromSeed(24);
      const [rows, vocab] = [9, 151_936];
      const logits = randomArray(rng, rows * vocab, 12);
      const targets = Int32Array.from({ length: rows }, (_, r) => (r * 7919) % vocab);
      const results = [native, ts].map((kernels) => {
        const out = { normalizers: new Float64Array(rows), logprobs: new Float64Array(rows), entropies: new Float64Array(rows) };
        kernels.tokenLogprobs({ logits, rows, vocab, targets, ...out });
        const dLogits = Float32Array.from(logits);
        kernels.tokenLogprobsBackward({ logits: dLogits, rows, vocab, targets, normalizers: out.normalizers, gradients: Float64Array.from({ length: rows }, (_, r) => r - 4) });
        return { ...out, dLogits };
      });
      const [n, t] = results as [(typeof results)[0], (typeof results)[0]];
      expect(Array.from(n.normalizers)).toEqual(Array.from(t.normalizers));
      expect(Array.from(n.logprobs)).toEqual(Array.from(t.logprobs));
      expect(Array.from(n.entropies)).toEqual(Array.from(t.entropies));
      let worst = 0;
      for (let i = 0; i < t.dLogits.length; i++) worst = Math.max(worst, Math.abs(n.dLogits[i]! - t.dLogits[i]!) / Math.max(Math.abs(t.dLogits[i]!), 1e-30));
      expect(worst).toBeLessThan(4e-6);
    });

    it("log-softmax where exp underflows or meets -Infinity, on a vocabulary that is no multiple of 8, gives the reference's bits", () => {
      const rng = Rng.fromSeed(26);
      // 64 rows: chunks of several rows per thread, so rows are summed several at a time and alone.
      const [rows, vocab] = [64, 1003];
      // Logits spread over thousands, so many entries fall past exp's floor (700 below the max), some -Infinity.
      const logits = randomArray(rng, rows * vocab, 1500);
      for (let i = 0; i < logits.length; i += 37) logits[i] = -Infinity;
      logits.fill(0, 2 * vocab, 3 * vocab);
      logits.fill(-Infinity, 9 * vocab + 500, 10 * vocab);
      const targets = Int32Array.from({ length: rows }, (_, r) => (r * 211) % vocab);
      const results = [native, ts].map((kernels) => {
        const out = { normalizers: new Float64Array(rows), logprobs: new Float64Array(rows), entropies: new Float64Array(rows) };
        kernels.tokenLogprobs({ logits, rows, vocab, targets, ...out });
        return out;
      });
      const [n, t] = results as [(typeof results)[0], (typeof results)[0]];
      expect(Array.from(n.normalizers)).toEqual(Array.from(t.normalizers));
      expect(Array.from(n.logprobs)).toEqual(Array.from(t.logprobs));
      expect(Array.from(n.entropies)).toEqual(Array.from(t.entropies));
    });

    it("AdamW updates a large tensor to the reference's bits; the norm pieces agree", () => {
      const rng = Rng.fromSeed(25);
      const size = 300_001;
      const [params, grads] = [randomArray(rng, size), randomArray(rng, size, 0.2)];
      const state = () => ({ params: Float32Array.from(params), expAvg: new Float32Array(size), expAvgSq: new Float32Array(size) });
      const [a, b] = [state(), state()];
      for (let step = 1; step <= 3; step++) {
        const settings = { grads, lr: 2e-3, step, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1 };
        expect(native.adamwStep({ ...a, ...settings })).toBe(0);
        expect(ts.adamwStep({ ...b, ...settings })).toBe(0);
      }
      expect(a.params).toEqual(b.params);
      expect(a.expAvgSq).toEqual(b.expAvgSq);
      expect(native.sumOfSquares(grads)).toBeCloseTo(ts.sumOfSquares(grads), 6);
    });
  });
});
