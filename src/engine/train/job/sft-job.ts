import type { LoadedModel } from "../../model/load.js";
import type { LoraTrainer } from "../lora-trainer.js";
import { sftStepMetrics } from "../step-metrics.js";
import { planSftJob } from "./plan.js";
import type { SftJobWork, TrainerUpdate } from "./types.js";

/**
 * An SFT job (`docs/api/training.md#sft`): the batches `planSftJob` makes, one optimizer step per
 * batch. Returns whether anything was trained.
 */
export function* sftJobSteps(model: LoadedModel, trainer: LoraTrainer, work: SftJobWork): Generator<TrainerUpdate, boolean> {
  const batches = planSftJob(model, work);
  yield { type: "started", numSequences: batches.length };
  for (const batch of batches) yield { type: "gradient_step", metrics: sftStepMetrics(trainer.sftStep(batch)) };
  return batches.length > 0;
}
