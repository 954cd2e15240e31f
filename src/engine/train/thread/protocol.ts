import type { TrainerUpdate, TrainingJobSpec } from "../job/types.js";

/** Messages between a trainer thread and the thread that owns it. Plain data only. */

/** `workerData` of a trainer thread: the base model it trains adapters of. */
export interface TrainerThreadInit {
  modelDir: string;
}

export type ToTrainerThread =
  /** Queue a job; runs are taken one at a time in order. */
  | { type: "run"; runId: number; spec: TrainingJobSpec }
  /** Stop a queued or running job before its next step. */
  | { type: "cancel"; runId: number };

export type FromTrainerThread =
  | { type: "update"; runId: number; update: TrainerUpdate }
  /** The job stopped with an error; `message` is what the job's training_failed says. */
  | { type: "failed"; runId: number; message: string }
  /** The job stopped because it was cancelled. */
  | { type: "cancelled"; runId: number };
