import { selectKernels, type SelectKernelsOptions } from "../../kernels/select.js";
import { TsKernels } from "../../kernels/ts/index.js";
import type { Kernels } from "../../kernels/types.js";
import { TsTrainingKernels } from "./ts/index.js";
import type { TrainingKernels } from "./types.js";

const factories = new Map<string, (forward: Kernels) => TrainingKernels>([["ts", () => new TsTrainingKernels()]]);

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
    throw new Error(`no training kernels for the "${forward.name}" kernel backend; load the model to train with FLYWHEEL_KERNELS=ts (available: ${[...factories.keys()].join(", ")})`);
  }
  return create(forward);
}

/**
 * The forward kernels to load a model for training on: the configured ones (`selectKernels`:
 * native when built, FLYWHEEL_KERNELS overrides) when a training backend pairs with them, else the
 * TypeScript ones.
 */
export function selectTrainableKernels(options: SelectKernelsOptions = {}): Kernels {
  const kernels = selectKernels(options);
  try {
    trainingKernelsFor(kernels);
    return kernels;
  } catch {
    return new TsKernels();
  }
}
