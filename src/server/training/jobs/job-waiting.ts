import type { JobSettings } from "../../../config.js";
import type { Store } from "../../../store/db.js";
import { getModel } from "../../../store/models.js";
import type { TrainingJobRow } from "../../../store/training-jobs.js";
import { workerPollsFor } from "../../../store/training-workers.js";
import { trainerPoolOf } from "../../../worker/routing.js";

/** A PyTorch worker that asked for jobs this recently counts as polling. */
export const WORKER_SEEN_MS = 120_000;

/**
 * Why a queued job is not running yet, when the reason is something its owner must fix: its base
 * model trains in the PyTorch pool (`FLYWHEEL_PYTORCH_MODELS`) and no worker for it has asked for
 * jobs lately. Null otherwise (the job is next in line, or waits for its model's earlier job).
 */
export async function jobWaitingFor(store: Store, jobs: Pick<JobSettings, "pytorchBaseModels">, job: TrainingJobRow): Promise<string | null> {
  if (job.status !== "queued") return null;
  const model = await getModel(store.db, job.entity, job.model_id);
  if (!model || trainerPoolOf(jobs, model.base_model) !== "pytorch") return null;
  if (await workerPollsFor(store.db, model.base_model, WORKER_SEEN_MS)) return null;
  return `a PyTorch worker for base model '${model.base_model}': its jobs train in the PyTorch pool (FLYWHEEL_PYTORCH_MODELS), and no worker for it has asked for jobs in the last ${WORKER_SEEN_MS / 1000} s (start one: python -m flywheel_trainer --server URL --key WORKER_KEY --base-model ${model.base_model})`;
}
