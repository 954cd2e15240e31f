import type { Kernels } from "../../kernels/types.js";
import { NativeKernels } from "../../kernels/native/index.js";
import { NativeTrainingKernels } from "./native.js";
import { TsTrainingKernels } from "./ts/index.js";
import type { TrainingKernels } from "./types.js";

const factories = new Map<string, (forward: Kernels) => TrainingKernels>([
  ["ts", () => new TsTrainingKernels()],
  [
    "native",
    (forward) => {
      if (!(forward instanceof NativeKernels)) throw new Error("native training kernels need the native forward kernels");
      return new NativeTrainingKernels(forward);
    },
  ],
]);

/**
 * Makes training kernels available for a forward backend (by its `Kernels.name`). A native backend
 * registers its own here; the trainer never changes.
 */
export function registerTrainingKernels(backend: string, create: (forward: Kernels) => TrainingKernels): void {
  factories.set(backend, create);
}

/** The training kernels that pair with a forward backend (they read its weight matrices). */
export function trainingKernelsFor(forward: Kernels): TrainingKernels {
  const create = factories.get(forward.name);
  if (!create) {
    throw new Error(`no training kernels for the "${forward.name}" kernel backend (available: ${[...factories.keys()].join(", ")})`);
  }
  return create(forward);
}
