import { createHash } from "node:crypto";
import type { LoadedModel } from "../../model/load.js";
import { Rng } from "../../sampling/rng.js";
import { encodeOptimizerState, OPTIMIZER_STATE_FILE } from "../optimizer-file.js";
import type { LoraTrainer } from "../lora-trainer.js";
import { rlJobSteps } from "./rl-job.js";
import { sftJobSteps } from "./sft-job.js";
import { startTrainer } from "./start.js";
import type { TrainerUpdate, TrainingJobSpec } from "./types.js";

/**
 * Runs one training job on a loaded model, one step per `next()`: `started`, a `gradient_step`
 * per optimizer step, then `finished` with the new checkpoint's files (the PEFT adapter and the
 * optimizer moments), or null when nothing was trained. Synchronous: the caller (the trainer
 * thread) decides what happens between steps, e.g. honouring a cancellation. Bad data throws a
 * `TrainingInputError` naming the item.
 */
export function* runTrainingJob(model: LoadedModel, spec: TrainingJobSpec): Generator<TrainerUpdate, void> {
  const trainer = startTrainer(model, spec);
  const random = seededRandom(spec.jobId);
  const trained = spec.work.kind === "rl" ? yield* rlJobSteps(model, trainer, spec, spec.work, random) : yield* sftJobSteps(model, trainer, spec.work);
  yield { type: "finished", adapter: trained ? checkpointFiles(trainer) : null };
}

/** The files of the checkpoint a job commits: PEFT's two, plus the optimizer moments. */
export function checkpointFiles(trainer: LoraTrainer): Record<string, Uint8Array> {
  return { ...trainer.adapterFiles(), [OPTIMIZER_STATE_FILE]: encodeOptimizerState(trainer.exportOptimizerState()) };
}

function seededRandom(jobId: string): () => number {
  const rng = Rng.fromSeed(createHash("sha256").update(jobId).digest().readBigInt64LE(0));
  return () => rng.nextFloat();
}
