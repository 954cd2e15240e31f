import { randomBytes } from "node:crypto";
import os from "node:os";
import { type BaseModelFilter, claimJobs, type Lease, reapExpiredLeases, releaseLease, renewLease } from "../store/job-leases.js";
import type { TrainingJobRow } from "../store/training-jobs.js";
import { type JobRunnerDeps, runClaimedJob } from "./run-job.js";

export interface WorkerSettings {
  /** Jobs run at once by this worker (each on a different model). */
  concurrency: number;
  /** How often to look for queued jobs and expired leases. */
  pollMs: number;
  /** A claimed job's lease; renewed every third of it while the job runs. */
  leaseMs: number;
  /** Claims of a job before a lost worker fails it instead of queueing it again. */
  maxAttempts: number;
  /** The base models whose jobs this worker takes (default: all). */
  baseModels?: BaseModelFilter;
}

/** pino-compatible subset, so the server's logger can be passed in. */
export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface RunningJob {
  lease: Lease;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Runs training jobs from the shared database: in-process inside `flywheel serve`, or as a
 * separate `flywheel worker` process. Any number of workers may share one database; claims and
 * leases keep each job on exactly one of them at a time.
 */
export class JobWorker {
  readonly id = `${os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  private readonly running = new Map<string, RunningJob>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private tickAgain = false;
  private stopped = true;

  constructor(
    private readonly deps: JobRunnerDeps,
    private readonly settings: WorkerSettings,
    private readonly log: WorkerLog,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.wake();
  }

  /** Looks for work now instead of at the next poll (e.g. right after a job was created). */
  wake(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    clearTimeout(this.timer);
    void this.tick();
  }

  /** Stops claiming, aborts the jobs in progress, gives them back (requeued or failed) and closes the trainer. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const jobs = [...this.running.values()];
    for (const job of jobs) job.controller.abort(new Error("worker shutting down"));
    await Promise.allSettled(jobs.map((job) => job.done));
    await this.deps.trainer?.close?.();
  }

  get activeJobIds(): string[] {
    return [...this.running.keys()];
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    try {
      const { requeued, failed } = await reapExpiredLeases(this.deps.store.db, { maxAttempts: this.settings.maxAttempts });
      if (requeued.length + failed.length > 0) this.log.warn({ requeued, failed }, "took back training jobs with expired leases");
      const free = this.settings.concurrency - this.running.size;
      if (!this.stopped && free > 0) {
        const claimed = await claimJobs(this.deps.store.db, this.id, { leaseMs: this.settings.leaseMs, limit: free, ...(this.settings.baseModels ? { baseModels: this.settings.baseModels } : {}) });
        for (const job of claimed) this.launch(job);
      }
    } catch (error) {
      this.log.error({ err: error }, "training worker poll failed");
    } finally {
      this.ticking = false;
    }
    if (this.stopped) return;
    if (this.tickAgain) {
      this.tickAgain = false;
      setImmediate(() => this.wake());
    } else {
      this.timer = setTimeout(() => this.wake(), this.settings.pollMs);
    }
  }

  private launch(job: TrainingJobRow): void {
    const lease: Lease = { jobId: job.id, workerId: this.id, leaseMs: this.settings.leaseMs };
    const controller = new AbortController();
    this.log.info({ jobId: job.id, modelId: job.model_id, kind: job.kind, attempt: job.attempts }, "training job started");
    const heartbeat = setInterval(
      () => {
        renewLease(this.deps.store.db, lease)
          .then((owned) => {
            if (!owned) controller.abort(new Error("lease lost"));
          })
          .catch((error: unknown) => this.log.warn({ err: error, jobId: job.id }, "lease renewal failed"));
      },
      Math.max(10, Math.floor(this.settings.leaseMs / 3)),
    );
    const done = runClaimedJob(this.deps, job, lease, controller.signal)
      .then(async () => {
        if (this.stopped && controller.signal.aborted) {
          const outcome = await releaseLease(this.deps.store.db, lease, { maxAttempts: this.settings.maxAttempts });
          if (outcome) this.log.warn({ jobId: job.id, outcome }, "gave back a training job on shutdown");
        }
      })
      .catch((error: unknown) => this.log.error({ err: error, jobId: job.id }, "training job runner crashed"))
      .finally(() => {
        clearInterval(heartbeat);
        this.running.delete(job.id);
        this.log.info({ jobId: job.id }, "training job left this worker");
        this.wake();
      });
    this.running.set(job.id, { lease, controller, done });
  }
}
