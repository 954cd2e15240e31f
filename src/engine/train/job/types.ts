import type { RlTrainingConfig } from "../config.js";
import type { StepValue } from "../learning-rate.js";
import type { SftTrainingConfig } from "../sft-config.js";
import type { TurnTokenLogprobs } from "../token-logprobs.js";
import type { TrajectoryGroupJson } from "../trajectory.js";

/**
 * One training job as the engine runs it: plain data (it crosses into the trainer thread), with
 * checkpoint files as local paths. The job system resolves steps, blobs and models to this.
 */
export interface TrainingJobSpec {
  /** Seeds the shuffles of tokenization and packing, so a job is reproducible. */
  jobId: string;
  /** The adapter to continue from; null starts a fresh one (the base weights). */
  from: AdapterFiles | null;
  /** How a fresh adapter is made: PEFT's init from this seed; by default rank 8, alpha 16, all linear layers. */
  newAdapter: { seed: number; baseModelNameOrPath: string; rank?: number; alpha?: number; targetModules?: string[] | string };
  /** The KL penalty's reference weights (`files` null = the base model); absent without a KL penalty. */
  klReference?: { files: AdapterFiles | null };
  /** The work, or its encoded bytes (`encoded-work.ts`), which the trainer thread decodes. */
  work: RlJobWork | SftJobWork | EncodedJobWork;
}

/** A checkpoint's files on disk: the PEFT pair, and the optimizer moments when it has them. */
export interface AdapterFiles {
  configFile: string;
  weightsFile: string;
  optimizerFile?: string;
}

export interface RlJobWork {
  kind: "rl";
  groups: TrajectoryGroupJson[];
  config: RlTrainingConfig;
  /**
   * `train/reward_std_dev` of the model's earlier steps, for `scale_learning_rate_by_reward_std_dev`
   * (docs/api/training.md#reward-std-lr).
   */
  rewardStdDevHistory: StepValue[];
}

export interface SftJobWork {
  kind: "sft";
  /** The data file's rows (`{"messages": [...], "tools"?: [...]}`), in file order. */
  rows: unknown[];
  /** The data file's name, for error messages. */
  fileName: string;
  config: SftTrainingConfig;
}

/**
 * What a training job reports, in this order: one `started` (num_sequences = the number of
 * optimizer steps it will take), then exactly that many `gradient_step`s, then one `finished`.
 */
export type TrainerUpdate =
  | { type: "started"; numSequences: number }
  /**
   * Numeric metrics of one optimizer step (docs/api/training.md#job-events: loss, grad_norm, learning_rate, …),
   * and for RL the trainer's logprobs of the sampled turns it trained on.
   */
  | { type: "gradient_step"; metrics: Record<string, number>; tokenLogprobs?: TurnTokenLogprobs[] }
  /** The new checkpoint's files (name → bytes), or null when nothing was trained (weights unchanged). */
  | { type: "finished"; adapter: Record<string, Uint8Array> | null };

/**
 * A job's work as the thread that decoded it hands it on: the structured-clone bytes of its data
 * (trajectory groups or SFT rows, and the config), so it reaches the trainer thread without the
 * event loop ever building, cloning or parsing it. Thousands of trajectories take a second or more
 * to rebuild, as long as parsing their JSON did. The reward history is read when the job starts,
 * after the data was encoded, so it travels beside it.
 */
export interface EncodedJobWork {
  kind: "encoded";
  bytes: Uint8Array;
  rewardStdDevHistory: StepValue[];
}
