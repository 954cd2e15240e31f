import type { Kernels } from "../../kernels/types.js";
import { NativeKernels } from "../../kernels/native/index.js";
import { NativeTrainingKernels } from "./native.js";
import { TsTrainingKernels } from "./ts/index.js";
import type { TrainingKernels } from "./types.js";

/** Every forward backend has training kernels that read its weight matrices. */
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

/** The training kernels that pair with a forward backend (they read its weight matrices). */
export function trainingKernelsFor(forward: Kernels): TrainingKernels {
  const create = factories.get(forward.name);
  if (!create) {
    throw new Error(`no training kernels for the "${forward.name}" kernel backend (available: ${[...factories.keys()].join(", ")})`);
  }
  return create(forward);
}
