import { describe, expect, it } from "vitest";
import { describeKernelConformance } from "../../../testing/kernel-conformance.js";
import { encodeFloats } from "../../checkpoint/dtype.js";
import { randomArray } from "../../../testing/float-arrays.js";
import { Rng } from "../../sampling/rng.js";
import type { WeightMatrix } from "../types.js";
import { roundedToBf16 } from "./bf16.js";
import { TsKernels } from "./index.js";

describeKernelConformance("TypeScript reference", () => new TsKernels());

describe("TsKernels", () => {
  it("keeps weights as f32 and refuses other backends' matrices", () => {
    const kernels = new TsKernels();
    expect(kernels.createMatrix(1, 2, "BF16", encodeFloats("BF16", Float32Array.of(1, 2))).dtype).toBe("f32");
    const foreign: WeightMatrix = { rows: 1, cols: 1, dtype: "f16" };
    expect(() => kernels.matmul(new Float32Array(1), new Float32Array(1), 1, foreign)).toThrow(/another kernel backend/);
  });

  it("checks buffer sizes", () => {
    const kernels = new TsKernels();
    const w = kernels.createMatrix(2, 3, "F32", encodeFloats("F32", new Float32Array(6)));
    expect(() => kernels.matmul(new Float32Array(2), new Float32Array(2), 1, w)).toThrow(/input holds 2 values/);
    expect(() => kernels.matmul(new Float32Array(1), new Float32Array(3), 1, w)).toThrow(/output holds 1 values/);
    expect(() => kernels.createMatrix(2, 3, "F32", new Uint8Array(8))).toThrow(RangeError);
  });
});

describe("TypeScript bf16 forward products", () => {
  it("are the f32 products of x and the weight rounded to bf16, plus the bias unrounded, with the weights of the last syncWeights", () => {
    const rng = Rng.fromSeed(8);
    const random = (length: number) => randomArray(rng, length);
    const [rows, outDim, inDim] = [6, 5, 9];
    const [w, x, bias] = [random(outDim * inDim), random(rows * inDim), random(outDim)];
    const [bf16, f32] = [new TsKernels({ forwardPrecision: "bf16" }), new TsKernels()];
    const forward = (kernels: TsKernels, matrix: WeightMatrix, input: Float32Array) => {
      const out = new Float32Array(rows * outDim);
      kernels.matmul(out, input, rows, matrix, bias);
      return out;
    };
    const weight = bf16.createMatrix(outDim, inDim, "F32", encodeFloats("F32", w));
    const expected = forward(f32, f32.createMatrix(outDim, inDim, "F32", encodeFloats("F32", roundedToBf16(w))), roundedToBf16(x));
    expect(forward(bf16, weight, x)).toEqual(expected);
    expect(forward(bf16, weight, x)).not.toEqual(forward(f32, f32.createMatrix(outDim, inDim, "F32", encodeFloats("F32", w)), x));

    // Full-parameter training writes the weights in place; the rounded copy follows at syncWeights.
    const updated = random(outDim * inDim);
    bf16.weightValues(weight).set(updated);
    bf16.syncWeights();
    expect(forward(bf16, weight, x)).toEqual(forward(f32, f32.createMatrix(outDim, inDim, "F32", encodeFloats("F32", roundedToBf16(updated))), roundedToBf16(x)));
  });
});
