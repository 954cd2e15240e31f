import { describe, expect, it } from "vitest";
import { describeNative } from "../../../testing/native.js";
import { describeTrainingKernelConformance } from "../../../testing/training-kernel-conformance.js";
import { encodeFloats } from "../../checkpoint/dtype.js";
import { SIMD_LEVELS } from "../../kernels/native/addon.js";
import { NativeKernels } from "../../kernels/native/index.js";
import { TsKernels } from "../../kernels/ts/index.js";
import { Rng } from "../../sampling/rng.js";
import { NativeTrainingKernels } from "./native.js";
import { trainingKernelsFor } from "./select.js";
import { TsTrainingKernels } from "./ts/index.js";

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

describeNative("native training kernels", (addon) => {
  const levels = SIMD_LEVELS.slice(SIMD_LEVELS.indexOf(addon.bestSimd as (typeof SIMD_LEVELS)[number]));
  for (const simd of levels) {
    describeTrainingKernelConformance(`native ${simd}, 2 threads`, () => {
      const forward = new NativeKernels(addon, { threads: 2, simd });
      return { forward, training: new NativeTrainingKernels(forward) };
    });
  }
  describeTrainingKernelConformance("native, 1 thread", () => {
    const forward = new NativeKernels(addon, { threads: 1 });
    return { forward, training: new NativeTrainingKernels(forward) };
  });

  it("pairs with the native forward kernels", () => {
    expect(trainingKernelsFor(new NativeKernels(addon, { threads: 1 })).name).toBe("native");
  });

  describe.each(levels)("against the TypeScript reference at model sizes (%s)", (simd) => {
    const forward = new NativeKernels(addon, { threads: 3, simd });
    const native = new NativeTrainingKernels(forward);
    const tsForward = new TsKernels();
    const ts = new TsTrainingKernels();

    it("linear backward of a bf16 weight (input and weight gradients)", () => {
      const rng = Rng.fromSeed(21);
      const [rows, outDim, inDim] = [70, 200, 136];
      const w = randomArray(rng, outDim * inDim);
      const bytes = encodeFloats("BF16", w);
      const [wn, wt] = [forward.createMatrix(outDim, inDim, "BF16", bytes), tsForward.createMatrix(outDim, inDim, "BF16", bytes)];
      const dy = randomArray(rng, rows * outDim);
      const x = randomArray(rng, rows * inDim);
      const [dxN, dxT] = [new Float32Array(rows * inDim).fill(1), new Float32Array(rows * inDim).fill(1)];
      native.linearBackward(dxN, dy, rows, wn, true);
      ts.linearBackward(dxT, dy, rows, wt, true);
      expect(worstError(dxN, dxT)).toBeLessThan(1e-5);
      const [dwN, dwT] = [new Float32Array(outDim * inDim), new Float32Array(outDim * inDim)];
      const [dbN, dbT] = [new Float32Array(outDim), new Float32Array(outDim)];
      native.linearWeightBackward(dwN, dbN, dy, x, rows, outDim, inDim);
      ts.linearWeightBackward(dwT, dbT, dy, x, rows, outDim, inDim);
      expect(worstError(dwN, dwT)).toBeLessThan(1e-5);
      expect(worstError(dbN, dbT)).toBeLessThan(1e-5);
    });

    it("attention backward with head size 64 over a prefix", () => {
      const rng = Rng.fromSeed(22);
      const shape = { heads: 6, kvHeads: 2, headDim: 64 };
      const [rows, start] = [90, 17];
      const kvSize = (start + rows) * shape.kvHeads * shape.headDim;
      const q = randomArray(rng, rows * shape.heads * shape.headDim);
      const keys = randomArray(rng, kvSize);
      const values = randomArray(rng, kvSize);
      const dOut = randomArray(rng, q.length);
      const run = (kernels: NativeTrainingKernels | TsTrainingKernels) => {
        const dq = new Float32Array(q.length);
        const [dk, dv] = [new Float32Array(kvSize).fill(0.25), new Float32Array(kvSize).fill(0.25)];
        kernels.attentionBackward(dq, dk, dv, dOut, q, keys, values, rows, start, shape);
        return [dq, dk, dv] as const;
      };
      const [n, t] = [run(native), run(ts)];
      for (let i = 0; i < 3; i++) expect(worstError(n[i]!, t[i]!)).toBeLessThan(2e-5);
    });

    it("elementwise backward kernels on long buffers", () => {
      const rng = Rng.fromSeed(23);
      const [rows, dim] = [64, 896];
      const x = randomArray(rng, rows * dim, 3);
      const dy = randomArray(rng, rows * dim);
      const weight = randomArray(rng, dim);
      const [dxN, dxT] = [new Float32Array(rows * dim), new Float32Array(rows * dim)];
      const [dwN, dwT] = [new Float32Array(dim), new Float32Array(dim)];
      native.rmsNormBackward(dxN, dy, x, weight, rows, 1e-6, false, dwN);
      ts.rmsNormBackward(dxT, dy, x, weight, rows, 1e-6, false, dwT);
      expect(worstError(dxN, dxT)).toBeLessThan(1e-5);
      expect(worstError(dwN, dwT)).toBeLessThan(1e-5);
      const [dgN, duN, dgT, duT] = [0, 0, 0, 0].map(() => new Float32Array(rows * dim));
      native.siluMulBackward(dgN!, duN!, dy, x, x, rows * dim);
      ts.siluMulBackward(dgT!, duT!, dy, x, x, rows * dim);
      expect(worstError(dgN!, dgT!)).toBeLessThan(1e-5);
      expect(worstError(duN!, duT!)).toBeLessThan(1e-5);
    });
  });
});
