import { describe, expect, it } from "vitest";
import { describeKernelConformance } from "../../../testing/kernel-conformance.js";
import { encodeFloats } from "../../checkpoint/dtype.js";
import type { WeightMatrix } from "../types.js";
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
