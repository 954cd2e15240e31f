import { describe, expect, it } from "vitest";
import { describeTrainingKernelConformance } from "../../../../testing/training-kernel-conformance.js";
import { TsKernels } from "../../../kernels/ts/index.js";
import type { Kernels } from "../../../kernels/types.js";
import { trainingKernelsFor } from "../select.js";
import { TsTrainingKernels } from "./index.js";

describeTrainingKernelConformance("TypeScript", () => ({ forward: new TsKernels(), training: new TsTrainingKernels() }));

describe("trainingKernelsFor", () => {
  it("pairs the TS forward kernels with the TS training kernels and names what is missing otherwise", () => {
    expect(trainingKernelsFor(new TsKernels()).name).toBe("ts");
    const other = { ...new TsKernels(), name: "gpu" } as unknown as Kernels;
    expect(() => trainingKernelsFor(other)).toThrow(/no training kernels for the "gpu" kernel backend \(available: ts, native\)/);
    const impostor = { ...new TsKernels(), name: "native" } as unknown as Kernels;
    expect(() => trainingKernelsFor(impostor)).toThrow(/native training kernels need the native forward kernels/);
  });
});
