import { describe, expect, it } from "vitest";
import { randomArray, relativeError, sameBits } from "../../../testing/float-arrays.js";
import { describeNative } from "../../../testing/native.js";
import { encodeFloats } from "../../checkpoint/dtype.js";
import { Rng } from "../../sampling/rng.js";
import { roundedToBf16 } from "../ts/bf16.js";
import { TsKernels } from "../ts/index.js";
import type { Kernels } from "../types.js";
import { NativeKernels } from "./index.js";

describeNative("native bf16 backward products (FLYWHEEL_BACKWARD_PRECISION=bf16)", (addon) => {
  it("are refused where the context cannot run them", () => {
    expect(() => new NativeKernels(addon, { threads: 1, simd: "avx2", backwardPrecision: "bf16" })).toThrow(/bf16 products need AVX-512 BF16/);
  });

  describe.runIf(addon.bf16Products)("on this CPU (AVX-512 BF16)", () => {
    const ts = new TsKernels({ backwardPrecision: "bf16" });
    const f32 = new TsKernels();

    // One row, a few rows, and a block past the matmul's 8-row tiles and the weight gradient's
    // 128-pair chunks; odd output and input counts leave a half pair, a ragged panel and a ragged
    // 64-input block; the LM head's long reduction crosses the 1024-column depth blocks.
    it.each([
      [1, 16, 16],
      [5, 33, 17],
      [37, 130, 70],
      [301, 200, 136],
      [20, 2051, 96],
    ])("input and weight gradients of %i rows × %i outputs × %i inputs match the reference's, on 1 and 3 threads", (rows, outDim, inDim) => {
      const rng = Rng.fromSeed(rows * 7 + outDim);
      const bytes = encodeFloats("F32", randomArray(rng, outDim * inDim));
      const dy = randomArray(rng, rows * outDim);
      const x = randomArray(rng, rows * inDim);
      const start = randomArray(rng, rows * inDim);
      const gradients = (kernels: Kernels) => {
        const w = kernels.createMatrix(outDim, inDim, "F32", bytes);
        const dx = start.slice();
        kernels.linearBackward({ dx, dy, rows, w, accumulate: true });
        const dWeight = new Float32Array(outDim * inDim).fill(0.5);
        const dBias = new Float32Array(outDim).fill(1);
        kernels.linearWeightBackward({ dWeight, dBias, dy, x, rows, outDim, inDim });
        return { dx, dWeight, dBias };
      };
      const [one, three] = [1, 3].map((threads) => gradients(new NativeKernels(addon, { threads, backwardPrecision: "bf16" }))) as [ReturnType<typeof gradients>, ReturnType<typeof gradients>];
      // Every sum is one chain over the pairs in order: the thread count does not change a bit.
      for (const key of ["dx", "dWeight", "dBias"] as const) expect(sameBits(one[key], three[key])).toBe(true);

      const [rounded, exact] = [gradients(ts), gradients(f32)];
      // The reference multiplies the same rounded operands in f64: only f32 summation differs.
      expect(relativeError(one.dx, rounded.dx)).toBeLessThan(2e-6);
      expect(relativeError(one.dWeight, rounded.dWeight)).toBeLessThan(2e-6);
      // The bias's gradient sums dy itself, unrounded.
      expect(relativeError(one.dBias, exact.dBias)).toBeLessThan(1e-6);
      // Against f32 operands: bf16's 8-bit significands, a few parts in a thousand, and never zero.
      for (const key of ["dx", "dWeight"] as const) {
        const error = relativeError(one[key], exact[key]);
        expect(error).toBeLessThan(1e-2);
        expect(error).toBeGreaterThan(1e-5);
      }
    });

    it("keep a paired Wᵀ of each weight: its values are W's rounded to bf16, and it follows W after an update", () => {
      const rng = Rng.fromSeed(5);
      const [outDim, inDim] = [37, 21];
      const values = randomArray(rng, outDim * inDim);
      const handle = new addon.Matrix(outDim, inDim, "F32", encodeFloats("F32", values));
      const paired = new addon.Matrix(handle, "BF16", "paired-transposed");
      expect([paired.rows, paired.cols, paired.dtype, paired.paired, handle.paired]).toEqual([inDim, outDim, "bf16", true, false]);
      const read = new Float32Array(inDim * outDim);
      paired.read(read);
      const transposedRounded = (source: Float32Array) => {
        const rounded = roundedToBf16(source);
        return Float32Array.from({ length: inDim * outDim }, (_, at) => rounded[(at % outDim) * inDim + Math.floor(at / outDim)]!);
      };
      expect(sameBits(read, transposedRounded(values))).toBe(true);

      const context = new addon.Context(3, "auto");
      const updated = randomArray(rng, outDim * inDim);
      context.writeMatrix(paired, updated, true);
      paired.read(read);
      expect(sameBits(read, transposedRounded(updated))).toBe(true);

      // paired is Wᵀ: inDim outputs from outDim inputs.
      expect(() => new addon.Context(1, "avx2").matmul(new Float32Array(inDim), new Float32Array(outDim), 1, paired, undefined)).toThrow(/needs bf16 products/);
      // Wᵀ of a paired matrix (a bf16 checkpoint's weight under the bf16 forward) reads its pairs.
      const back = new addon.Matrix(paired, "BF16", "paired-transposed");
      const backRead = new Float32Array(outDim * inDim);
      back.read(backRead);
      expect([back.rows, back.cols, back.paired]).toEqual([outDim, inDim, true]);
      expect(sameBits(backRead, roundedToBf16(updated))).toBe(true);
      // Calls the types rule out, as plain JavaScript could make them.
      expect(() => new addon.Matrix(handle, "F32" as "BF16", "paired-transposed")).toThrow(/a paired matrix is bf16/);
      expect(() => new addon.Matrix(handle, "BF16", "pairs" as "paired")).toThrow(/layout is "paired" or "paired-transposed"/);
    });

    it("under full-parameter training, the input gradient uses the weights of the last syncWeights", () => {
      const rng = Rng.fromSeed(9);
      const [rows, outDim, inDim] = [12, 40, 24];
      const bytes = encodeFloats("F32", randomArray(rng, outDim * inDim));
      const native = new NativeKernels(addon, { threads: 2, backwardPrecision: "bf16" });
      const w = native.createMatrix(outDim, inDim, "F32", bytes);
      const dy = randomArray(rng, rows * outDim);
      const inputGradient = (kernels: NativeKernels | TsKernels, weight: typeof w) => {
        const dx = new Float32Array(rows * inDim);
        kernels.linearBackward({ dx, dy, rows, w: weight });
        return dx;
      };
      inputGradient(native, w); // makes and keeps the paired Wᵀ
      const values = native.weightValues(w);
      values.set(randomArray(rng, outDim * inDim));
      native.syncWeights();
      const expected = inputGradient(ts, ts.createMatrix(outDim, inDim, "F32", encodeFloats("F32", values)));
      expect(relativeError(inputGradient(native, w), expected)).toBeLessThan(2e-6);
    });
  });
});
