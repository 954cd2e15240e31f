import { describe, expect, it } from "vitest";
import { TsKernels } from "../../kernels/ts/index.js";
import type { Kernels } from "../../kernels/types.js";
import { registerTrainingKernels, selectTrainableKernels, trainingKernelsFor } from "./select.js";
import { TsTrainingKernels } from "./ts/index.js";

/** A forward backend of another name (its kernels are the TypeScript ones): stands for a native build. */
function otherBackend(name: string): Kernels {
  const kernels = new TsKernels();
  Object.defineProperty(kernels, "name", { value: name });
  return kernels;
}

describe("selectTrainableKernels", () => {
  it("keeps FLYWHEEL_KERNELS=ts", () => {
    expect(selectTrainableKernels({ env: { FLYWHEEL_KERNELS: "ts" } }).name).toBe("ts");
  });

  it("falls back to the TypeScript kernels when the selected backend has no training kernels", () => {
    const forward = otherBackend("untrainable");
    expect(() => trainingKernelsFor(forward)).toThrow(/no training kernels for the "untrainable" kernel backend/);
    expect(selectTrainableKernels({ env: {}, loadNative: () => forward }).name).toBe("ts");
  });

  it("keeps the selected backend once training kernels are registered for it", () => {
    const forward = otherBackend("trainable");
    registerTrainingKernels("trainable", () => new TsTrainingKernels());
    expect(selectTrainableKernels({ env: {}, loadNative: () => forward })).toBe(forward);
  });
});
