import { describe, expect, it } from "vitest";
import { randomArray, relativeError, sameBits } from "../../../testing/float-arrays.js";
import { describeNative } from "../../../testing/native.js";
import { encodeFloats } from "../../checkpoint/dtype.js";
import { Rng } from "../../sampling/rng.js";
import { roundedToBf16 } from "../ts/bf16.js";
import { TsKernels } from "../ts/index.js";
import type { Kernels, WeightMatrix } from "../types.js";
import { NativeKernels } from "./index.js";

function forward(kernels: Kernels, w: WeightMatrix, x: Float32Array, rows: number, bias?: Float32Array): Float32Array {
  const out = new Float32Array(rows * w.rows);
  kernels.matmul(out, x, rows, w, bias);
  return out;
}

describeNative("native bf16 forward products (FLYWHEEL_FORWARD_PRECISION=bf16)", (addon) => {
  it("are refused where the context cannot run them", () => {
    expect(() => new NativeKernels(addon, { threads: 1, simd: "avx2", forwardPrecision: "bf16" })).toThrow(/bf16 products need AVX-512 BF16/);
  });

  describe.runIf(addon.bf16Products)("on this CPU (AVX-512 BF16)", () => {
    const ts = new TsKernels({ forwardPrecision: "bf16" });
    const f32 = new TsKernels();

    // Decode's single row, the few-row tiles, blocks past the 8-row tile; odd input counts leave a
    // half pair, odd output counts a ragged panel; 2500 inputs cross the 1024-column depth blocks.
    it.each([
      [1, 16, 16],
      [3, 33, 17],
      [9, 130, 71],
      [37, 200, 136],
      [4, 40, 2500],
    ])("%i rows × %i outputs × %i inputs match the reference's, on 1 and 3 threads, and each row alone gets its batch's bits", (rows, outDim, inDim) => {
      const rng = Rng.fromSeed(rows * 11 + inDim);
      const bytes = encodeFloats("F32", randomArray(rng, outDim * inDim));
      const x = randomArray(rng, rows * inDim);
      const bias = randomArray(rng, outDim);
      const [one, three] = [1, 3].map((threads) => new NativeKernels(addon, { threads, forwardPrecision: "bf16" })) as [NativeKernels, NativeKernels];
      const [w1, w3] = [one, three].map((kernels) => kernels.createMatrix(outDim, inDim, "F32", bytes)) as [WeightMatrix, WeightMatrix];
      const batch = forward(one, w1, x, rows, bias);
      expect(sameBits(batch, forward(three, w3, x, rows, bias))).toBe(true);
      // Batch invariance, which sampler/trainer parity rests on: a row alone is decode's call.
      for (let r = 0; r < rows; r++) {
        const alone = forward(three, w3, x.subarray(r * inDim, (r + 1) * inDim), 1, bias);
        expect(sameBits(alone, batch.subarray(r * outDim, (r + 1) * outDim))).toBe(true);
      }
      // The reference multiplies the same rounded operands in f64: only f32 summation differs.
      expect(relativeError(batch, forward(ts, ts.createMatrix(outDim, inDim, "F32", bytes), x, rows, bias))).toBeLessThan(2e-6);
      // Against f32 operands: bf16's 8-bit significands, a few parts in a thousand, and never zero.
      const error = relativeError(batch, forward(f32, f32.createMatrix(outDim, inDim, "F32", bytes), x, rows, bias));
      expect(error).toBeLessThan(1e-2);
      expect(error).toBeGreaterThan(1e-5);
    });

    it.each(["f32", "bf16"] as const)("pack a bf16 checkpoint's weight paired from the start: the same values, products, rows and Wᵀ (%s backward) as a rounded copy", (backwardPrecision) => {
      const rng = Rng.fromSeed(3);
      const [rows, outDim, inDim] = [6, 37, 21];
      const values = roundedToBf16(randomArray(rng, outDim * inDim));
      const native = new NativeKernels(addon, { threads: 2, forwardPrecision: "bf16", backwardPrecision });
      const stored = native.createMatrix(outDim, inDim, "BF16", encodeFloats("BF16", values));
      const copied = native.createMatrix(outDim, inDim, "F32", encodeFloats("F32", values));
      expect([native.handle(stored).paired, native.handle(copied).paired]).toEqual([true, false]);
      const read = new Float32Array(outDim * inDim);
      native.handle(stored).read(read);
      expect(sameBits(read, values)).toBe(true);

      const x = randomArray(rng, rows * inDim);
      expect(sameBits(forward(native, stored, x, rows), forward(native, copied, x, rows))).toBe(true);
      const ids = [0, 36, 5, 16];
      const [fromStored, fromCopied] = [stored, copied].map((table) => {
        const out = new Float32Array(ids.length * inDim);
        native.embed(out, table, ids);
        return out;
      }) as [Float32Array, Float32Array];
      expect(sameBits(fromStored, fromCopied)).toBe(true);
      // The backward's Wᵀ (f32, 16-bit or paired) of a paired weight holds the same values as a plain weight's.
      const dy = randomArray(rng, rows * outDim);
      const [dxStored, dxCopied] = [stored, copied].map((w) => {
        const dx = new Float32Array(rows * inDim);
        native.linearBackward({ dx, dy, rows, w });
        return dx;
      }) as [Float32Array, Float32Array];
      expect(sameBits(dxStored, dxCopied)).toBe(true);
    });

    it.each(["F32", "BF16"] as const)("under full-parameter training from %s weights, the forward uses the weights of the last syncWeights", (dtype) => {
      const rng = Rng.fromSeed(dtype === "F32" ? 13 : 14);
      const [rows, outDim, inDim] = [5, 40, 24];
      const native = new NativeKernels(addon, { threads: 2, forwardPrecision: "bf16" });
      const w = native.createMatrix(outDim, inDim, dtype, encodeFloats(dtype, randomArray(rng, outDim * inDim)));
      const x = randomArray(rng, rows * inDim);
      forward(native, w, x, rows); // makes and keeps any paired copy
      const values = native.weightValues(w);
      values.set(randomArray(rng, outDim * inDim));
      native.syncWeights();
      // A bf16 weight keeps bf16 values (training rounds what it writes back); an f32 one keeps its own.
      const kept = dtype === "BF16" ? roundedToBf16(values) : values;
      const expected = forward(ts, ts.createMatrix(outDim, inDim, "F32", encodeFloats("F32", kept)), x, rows);
      expect(relativeError(forward(native, w, x, rows), expected)).toBeLessThan(2e-6);
    });

    it("refuses layouts a paired matrix cannot have", () => {
      const handle = new addon.Matrix(4, 4, "F32", new Uint8Array(64));
      const paired = new addon.Matrix(handle, "BF16", "paired");
      expect([paired.rows, paired.cols, paired.paired]).toEqual([4, 4, true]);
      expect(() => new addon.Matrix(paired, "BF16", "paired")).toThrow(/not paired again/);
      expect(() => new addon.Matrix(4, 4, "F32", new Uint8Array(64), "paired")).toThrow(/a paired matrix is bf16/);
      expect(() => new addon.Matrix(4, 4, "BF16", new Uint8Array(32), "paired-transposed" as "paired")).toThrow(/paired, not paired-transposed/);
    });
  });
});
