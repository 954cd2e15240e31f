import type { ModelCatalog } from "../engine/catalog.js";
import { klReferenceStep } from "../engine/train/config.js";
import type { BlobStore } from "../store/blobs.js";
import { checkpointMetricHistory } from "../store/checkpoints.js";
import type { Store } from "../store/db.js";
import { type Lease, LeaseLostError } from "../store/job-leases.js";
import { beginJob, type CheckpointState, commitJobCheckpoint, failJob, MissingCheckpointError, recordJobEvent } from "../store/job-lifecycle.js";
import { decodeJson } from "../store/json.js";
import { getModel } from "../store/models.js";
import { saveTurnLogprobs } from "../store/token-logprobs.js";
import type { TrainingJobRow } from "../store/training-jobs.js";
import { readJobWork } from "./job-input.js";
import { decodeJobWorkInThread } from "./job-work-in-thread.js";
import { DEFAULT_REMOTE_DATA_LIMITS, type RemoteDataLimits } from "./remote-data.js";
import { SftDataError } from "./sft-data.js";
import type { DecodedJobWork, ModelLoraConfig, Trainer, TrainerUpdate, TrainingRun } from "./trainer.js";
import { checkFinished, checkGradientStep, checkStarted, finiteMetrics, type TrainerProgress } from "./trainer-protocol.js";

export interface JobRunnerDeps {
  store: Store;
  blobs: BlobStore;
  catalog: ModelCatalog;
  /** Undefined where no trainer is installed: only jobs with nothing to train can then run. */
  trainer: Trainer | undefined;
  /**
   * A pause after training_started and after every gradient step, on every path (0 = none). It
   * throttles jobs for demonstrations and lets fault tests observe a job while it runs.
   */
  stepDelayMs: number;
  /** Size and time limits of training data fetched from an http(s) `training_data_url`; default 1 GiB, 120 s. */
  remoteData?: RemoteDataLimits;
}

/** A failure found by the runner itself; like any error, its message becomes training_failed's. */
class JobFailure extends Error {}

/**
 * Runs one claimed job to its end: training_started, the gradient steps, then the checkpoint and
 * training_ended in one transaction, or training_failed. Returns quietly when the lease is lost
 * (the job was cancelled or taken back: someone else wrote its terminal event) or `signal` aborts;
 * the caller decides what an abort means for the job.
 */
export async function runClaimedJob(deps: JobRunnerDeps, job: TrainingJobRow, lease: Lease, signal: AbortSignal): Promise<void> {
  const { db } = deps.store;
  try {
    const model = await getModel(db, job.entity, job.model_id);
    if (!model) throw new JobFailure(`model ${job.model_id} no longer exists`);
    const work = await loadWork(job, deps, signal);
    const referenceStepFor = work.kind === "rl" ? (base: number) => klReferenceStep(work.config, base) : undefined;
    const { base, reference } = await beginJob(db, lease, model.id, referenceStepFor).catch((error: unknown) => {
      throw error instanceof MissingCheckpointError ? new JobFailure(error.message) : error;
    });
    const next: CheckpointState = { step: base.step + 1, files: base.files };

    if (work.kind === "rl" && work.trainableTrajectories === 0) {
      // docs/api/training.md#advantages: nothing to learn from, yet the step advances with the same weights.
      await recordJobEvent(db, lease, "training_started", { num_sequences: 0 });
      await pause(deps.stepDelayMs, signal);
      await commitJobCheckpoint(db, lease, model.id, next);
      return;
    }
    if (!deps.trainer) {
      throw new JobFailure(`this server has no trainer installed for base model '${model.base_model}'; only jobs with nothing to train (no reward variance) can run`);
    }
    const scalesByRewardStdDev = work.kind === "rl" && work.config.scale_learning_rate_by_reward_std_dev;
    const run: TrainingRun = {
      jobId: job.id,
      model: { id: model.id, entity: model.entity, project: model.project, name: model.name, baseModel: model.base_model, lora: model.lora_config === null ? null : decodeJson<ModelLoraConfig>(model.lora_config) },
      servedBaseModel: deps.catalog.get(model.base_model),
      from: base,
      klReference: reference,
      blobs: deps.blobs,
      work: work.kind === "rl" ? { ...work, rewardStdDevHistory: scalesByRewardStdDev ? await checkpointMetricHistory(db, model.id, "train/reward_std_dev", base.step) : [] } : work,
      signal,
    };
    const adapter = await followTrainer(deps, lease, deps.trainer.train(run), signal);
    if (adapter) {
      const files: Record<string, string> = {};
      // Blobs first, then one transaction makes the checkpoint visible: never a partial checkpoint.
      for (const [name, bytes] of Object.entries(adapter)) files[name] = await deps.blobs.put(bytes);
      next.files = files;
    }
    await commitJobCheckpoint(db, lease, model.id, next);
  } catch (error) {
    if (error instanceof LeaseLostError || signal.aborted) return;
    const message = error instanceof Error ? error.message : String(error);
    await failJob(db, lease, message).catch((failError: unknown) => {
      if (!(failError instanceof LeaseLostError)) throw failError;
    });
  }
}

/** Reads the job's input (I/O, on the loop), then decodes it on a thread of its own. */
async function loadWork(job: TrainingJobRow, deps: JobRunnerDeps, signal: AbortSignal): Promise<DecodedJobWork> {
  try {
    return await decodeJobWorkInThread(await readJobWork(job, deps.blobs, { limits: deps.remoteData ?? DEFAULT_REMOTE_DATA_LIMITS, signal }));
  } catch (error) {
    if (error instanceof SftDataError) throw new JobFailure(error.message);
    throw error;
  }
}

/** Records the trainer's updates as events, holding it to the documented order (`trainer-protocol.ts`). */
async function followTrainer(deps: JobRunnerDeps, lease: Lease, updates: AsyncIterable<TrainerUpdate>, signal: AbortSignal): Promise<Record<string, Uint8Array> | null> {
  const { db } = deps.store;
  const progress: TrainerProgress = { announced: undefined, steps: 0 };
  for await (const update of updates) {
    if (signal.aborted) throw signal.reason;
    switch (update.type) {
      case "started":
        progress.announced = checkStarted(progress, update.numSequences);
        await recordJobEvent(db, lease, "training_started", { num_sequences: progress.announced });
        await pause(deps.stepDelayMs, signal);
        break;
      case "gradient_step":
        checkGradientStep(progress);
        progress.steps++;
        await recordJobEvent(db, lease, "gradient_step", finiteMetrics(update.metrics));
        if (update.tokenLogprobs && update.tokenLogprobs.length > 0) await saveTurnLogprobs(db, lease.jobId, update.tokenLogprobs);
        await pause(deps.stepDelayMs, signal);
        break;
      case "finished":
        checkFinished(progress);
        return update.adapter;
    }
  }
  throw new JobFailure("trainer protocol error: ended without finishing");
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
