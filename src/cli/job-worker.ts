import type { AppServices } from "../server/app.js";
import type { Trainer } from "../worker/trainer.js";
import { JobWorker, type WorkerLog } from "../worker/worker.js";

/**
 * The job worker of `serve` and `worker`. No trainer is installed yet: until the engine's trainer
 * is wired in here, jobs with something to train end with a training_failed that says so, and
 * jobs with nothing to train advance the step (spec/training.md §5.2).
 */
export function createJobWorker(services: AppServices, log: WorkerLog, trainer: Trainer | undefined = undefined): JobWorker {
  const { jobs } = services.config;
  return new JobWorker(
    { store: services.store, blobs: services.blobs, catalog: services.catalog, trainer, stepDelayMs: jobs.stepDelayMs },
    { concurrency: jobs.concurrency, pollMs: jobs.pollMs, leaseMs: jobs.leaseMs, maxAttempts: jobs.maxAttempts },
    log,
  );
}
