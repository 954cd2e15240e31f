import type { JobSettings } from "../config.js";
import type { BaseModelFilter } from "../store/job-leases.js";

/** Where a base model's jobs train (docs/configuration.md `FLYWHEEL_PYTORCH_MODELS`). */
export type TrainerPool = "built-in" | "pytorch";

export function trainerPoolOf(settings: Pick<JobSettings, "pytorchBaseModels">, baseModel: string): TrainerPool {
  const pool = settings.pytorchBaseModels;
  return pool === "all" || pool.includes(baseModel) ? "pytorch" : "built-in";
}

/** The jobs the built-in trainer (`serve`'s worker, `flywheel worker`) claims: all but the PyTorch pool's. */
export function builtInWorkerFilter(settings: Pick<JobSettings, "pytorchBaseModels">): BaseModelFilter {
  const pool = settings.pytorchBaseModels;
  return pool === "all" ? { only: [] } : { except: pool };
}

/** The subset of `requested` a PyTorch worker may claim: the pool's base models only. */
export function pytorchClaimFilter(settings: Pick<JobSettings, "pytorchBaseModels">, requested: readonly string[]): BaseModelFilter {
  return { only: requested.filter((baseModel) => trainerPoolOf(settings, baseModel) === "pytorch") };
}
