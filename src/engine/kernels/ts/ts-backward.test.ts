import { describe, expect, it } from "vitest";
import { describeBackwardConformance } from "../../../testing/backward-conformance.js";
import { encodeFloats } from "../../checkpoint/dtype.js";
import { randomArray } from "../../../testing/float-arrays.js";
import { Rng } from "../../sampling/rng.js";
import { roundedToBf16 } from "./bf16.js";
import { TsKernels } from "./index.js";

describeBackwardConformance("TypeScript", () => new TsKernels());

describe("TypeScript bf16 backward products", () => {
  it("are the f32 products of the operands rounded to bf16; the bias's gradient sums dy unrounded", () => {
    const rng = Rng.fromSeed(3);
    const random = (length: number) => randomArray(rng, length);
    const [rows, outDim, inDim] = [7, 5, 9];
    const [w, dy, x] = [random(outDim * inDim), random(rows * outDim), random(rows * inDim)];
    const [bf16, f32] = [new TsKernels({ backwardPrecision: "bf16" }), new TsKernels()];
    const gradients = (kernels: TsKernels, weights: Float32Array, dyValues: Float32Array, xValues: Float32Array) => {
      const dx = new Float32Array(rows * inDim);
      kernels.linearBackward({ dx, dy: dyValues, rows, w: kernels.createMatrix(outDim, inDim, "F32", encodeFloats("F32", weights)) });
      const [dWeight, dBias] = [new Float32Array(outDim * inDim), new Float32Array(outDim)];
      kernels.linearWeightBackward({ dWeight, dBias, dy: dyValues, x: xValues, rows, outDim, inDim });
      return { dx, dWeight, dBias };
    };
    const rounded = gradients(bf16, w, dy, x);
    const expected = gradients(f32, roundedToBf16(w), roundedToBf16(dy), roundedToBf16(x));
    expect(rounded.dx).toEqual(expected.dx);
    expect(rounded.dWeight).toEqual(expected.dWeight);
    expect(rounded.dBias).toEqual(gradients(f32, w, dy, x).dBias);
    expect(rounded.dx).not.toEqual(gradients(f32, w, dy, x).dx);
  });
});
