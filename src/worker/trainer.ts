import type { CatalogEntry } from "../engine/catalog.js";
import type { RlTrainingConfig } from "../engine/train/config.js";
import type { RlJobWork, SftJobWork, TrainerUpdate } from "../engine/train/job/types.js";
import type { StepValue } from "../engine/train/learning-rate.js";
import type { SftTrainingConfig } from "../engine/train/sft-config.js";
import type { BlobStore } from "../store/blobs.js";
import type { CheckpointState, ReferenceState } from "../store/job-lifecycle.js";
import type { SftRow } from "./sft-data.js";
import type { TrajectoryGroup } from "../engine/train/trajectory.js";

/**
 * The seam between the job system and the model math. The job runner owns everything durable
 * (claiming, leases, events, blobs, the atomic checkpoint commit); a Trainer only turns one job's
 * data and starting weights into a sequence of updates. It must run its heavy work off the
 * calling thread (worker threads) and stop promptly when `signal` aborts.
 */
export interface Trainer {
  train(run: TrainingRun): AsyncIterable<TrainerUpdate>;
  /** Releases what the trainer holds (threads, loaded models) when its worker stops. */
  close?(): Promise<void>;
}

export interface TrainingRun {
  jobId: string;
  model: { id: string; entity: string; project: string; name: string; baseModel: string; lora: ModelLoraConfig | null };
  /** The served base model (its directory); undefined if the catalog no longer serves it. */
  servedBaseModel: CatalogEntry | undefined;
  /** The weights to start from: the model's latest checkpoint (files null = the base weights). */
  from: CheckpointState;
  /** The KL reference when kl_penalty_coef > 0 (step null = the base weights); undefined otherwise. */
  klReference: ReferenceState | undefined;
  /** Checkpoint files are blob digests in this store; `localPath` gives a readable file. */
  blobs: BlobStore;
  /**
   * The work, decoded off the event loop: its kind, config and counts, and its data as encoded
   * bytes for the trainer's own thread (`openRunWork` decodes them). An RL job's
   * `rewardStdDevHistory` is `train/reward_std_dev` logged on the model's checkpoints up to the
   * starting step, for `scale_learning_rate_by_reward_std_dev` (docs/api/training.md#reward-std-lr).
   */
  work: RunWork;
  /** Aborts when the job is cancelled, its lease is lost or the worker shuts down. */
  signal: AbortSignal;
}

/** A model's own LoRA shape, in PEFT's names (`models.lora_config`); null: rank 8, alpha 16, all linear layers. */
export interface ModelLoraConfig {
  r: number;
  lora_alpha: number;
  target_modules: string[] | string;
}

/**
 * An RL job's work as its stored input gives it: the engine's work less the reward history, which is
 * read from the model's checkpoints when the job runs (it depends on the step the job starts from).
 */
export interface RlWork extends Omit<RlJobWork, "rewardStdDevHistory"> {
  groups: TrajectoryGroup[];
}

/** An SFT job's work: the engine's, with rows as parsed, and the artifact's metadata.json (when it has one). */
export interface SftWork extends SftJobWork {
  rows: SftRow[];
  metadata: unknown;
}

/**
 * What a trainer yields, in this order: one `started` (num_sequences = the number of optimizer
 * steps it will take), then exactly that many `gradient_step`s, then one `finished`. The runner
 * turns them into the job's events and refuses any other order.
 */
export type { TrainerUpdate };

/**
 * A job's work as the thread that decoded it describes it (`job-work-in-thread.ts`): what the
 * runner needs on the event loop (kind, config, how many trajectories can train, the SFT file's
 * name and metadata), and the data itself as `encodeJobWork` bytes, which only the trainer's thread
 * decodes.
 */
export type DecodedJobWork =
  | { kind: "rl"; config: RlTrainingConfig; trainableTrajectories: number; encoded: Uint8Array }
  | { kind: "sft"; config: SftTrainingConfig; fileName: string; rows: number; metadata: unknown; encoded: Uint8Array };

/** The work a trainer gets: an RL job's also carries its reward history. */
export type RunWork = (Extract<DecodedJobWork, { kind: "rl" }> & { rewardStdDevHistory: StepValue[] }) | Extract<DecodedJobWork, { kind: "sft" }>;
