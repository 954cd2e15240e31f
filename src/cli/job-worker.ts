import { TrainerThreads } from "../engine/train/thread/trainer-threads.js";
import type { AppServices } from "../server/app.js";
import { EngineTrainer } from "../worker/engine-trainer.js";
import type { Trainer } from "../worker/trainer.js";
import { builtInWorkerFilter } from "../worker/routing.js";
import { JobWorker, type WorkerLog } from "../worker/worker.js";

/**
 * The job worker of `serve` and `worker`: the same code path in both. Jobs train in trainer
 * threads of this process (one per base model, stopped after FLYWHEEL_TRAINER_IDLE_MS without a
 * job); `trainer` replaces the engine's trainer (tests).
 */
export function createJobWorker(services: AppServices, log: WorkerLog, trainer?: Trainer): JobWorker {
  const { jobs } = services.config;
  return new JobWorker(
    {
      store: services.store,
      blobs: services.blobs,
      catalog: services.catalog,
      trainer: trainer ?? new EngineTrainer(new TrainerThreads({ idleMs: jobs.trainerIdleMs })),
      stepDelayMs: jobs.stepDelayMs,
      remoteData: jobs.webTrainingData,
    },
    { concurrency: jobs.concurrency, pollMs: jobs.pollMs, leaseMs: jobs.leaseMs, maxAttempts: jobs.maxAttempts, baseModels: builtInWorkerFilter(jobs) },
    log,
  );
}
