import type { LoadedModel } from "../../model/load.js";
import { NonFiniteTrainingError } from "../errors.js";
import { encodeOptimizerState, OPTIMIZER_STATE_FILE } from "../optimizer-file.js";
import type { LoraTrainer } from "../lora-trainer.js";
import { openJobWork } from "./encoded-work.js";
import { jobRandom } from "./plan.js";
import { rlJobSteps } from "./rl-job.js";
import { sftJobSteps } from "./sft-job.js";
import { startTrainer } from "./start.js";
import type { TrainerUpdate, TrainingJobSpec } from "./types.js";

/**
 * Runs one training job on a loaded model, one step per `next()`: `started`, a `gradient_step`
 * per optimizer step, then `finished` with the new checkpoint's files (the PEFT adapter and the
 * optimizer moments), or null when nothing was trained. Synchronous: the caller (the trainer
 * thread) decides what happens between steps, e.g. honouring a cancellation. Bad data throws a
 * `TrainingInputError` naming the item; a step that goes non-finite throws `NonFiniteTrainingError`
 * naming the step, before its gradient_step, so the job fails and nothing is committed.
 */
export function* runTrainingJob(model: LoadedModel, spec: TrainingJobSpec): Generator<TrainerUpdate, void> {
  const trainer = startTrainer(model, spec);
  const random = jobRandom(spec.jobId);
  const work = openJobWork(spec.work);
  const steps = work.kind === "rl" ? rlJobSteps(model, trainer, spec, work, random) : sftJobSteps(model, trainer, work);
  const trained = yield* namingFailedStep(steps);
  yield { type: "finished", adapter: trained ? checkpointFiles(trainer) : null };
}

/** The files of the checkpoint a job commits: PEFT's two, plus the optimizer moments. */
export function checkpointFiles(trainer: LoraTrainer): Record<string, Uint8Array> {
  return { ...trainer.adapterFiles(), [OPTIMIZER_STATE_FILE]: encodeOptimizerState(trainer.exportOptimizerState()) };
}

/** Passes the steps through; a non-finite step's error gains the step number and what to do about it. */
function* namingFailedStep<T>(steps: Generator<TrainerUpdate, T>): Generator<TrainerUpdate, T> {
  let completed = 0;
  try {
    for (let next = steps.next(); ; next = steps.next()) {
      if (next.done) return next.value;
      if (next.value.type === "gradient_step") completed++;
      yield next.value;
    }
  } catch (error) {
    if (!(error instanceof NonFiniteTrainingError)) throw error;
    throw new NonFiniteTrainingError(`gradient step ${completed + 1}: ${error.message}; no checkpoint was committed (a lower learning rate, or a model trained from an earlier checkpoint, may help)`);
  }
}
