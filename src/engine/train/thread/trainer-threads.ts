import type { TrainerUpdate, TrainingJobSpec } from "../job/types.js";
import { TrainerThread } from "./trainer-thread.js";

export interface TrainerThreadsOptions {
  /** How long a thread with no job keeps its model loaded before it stops (0: stop at once). */
  idleMs: number;
}

/**
 * The trainer threads of a process: one per base model, started on its first job. Jobs on
 * adapters of the same base model share the thread and its one loaded copy of the weights, taking
 * turns; jobs on different base models train in parallel. A thread left without jobs for
 * `idleMs` stops, which frees its model.
 */
export class TrainerThreads {
  private readonly threads = new Map<string, { thread: TrainerThread; idleTimer: NodeJS.Timeout | undefined }>();
  private closed = false;

  constructor(private readonly options: TrainerThreadsOptions) {}

  /** Runs a job on adapters of the base model in `modelDir`; see `TrainerThread.run`. */
  run(modelDir: string, spec: TrainingJobSpec, signal: AbortSignal): AsyncIterable<TrainerUpdate> {
    if (this.closed) throw new Error("the trainer threads are closed");
    let entry = this.threads.get(modelDir);
    if (!entry?.thread.alive) {
      const thread = new TrainerThread({ modelDir });
      const created = { thread, idleTimer: undefined as NodeJS.Timeout | undefined };
      thread.onIdle = () => this.idle(modelDir, created);
      entry = created;
      this.threads.set(modelDir, entry);
    }
    clearTimeout(entry.idleTimer);
    entry.idleTimer = undefined;
    return entry.thread.run(spec, signal);
  }

  /** Model directories with a running thread. */
  get modelDirs(): string[] {
    return [...this.threads.keys()];
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.threads.values()];
    this.threads.clear();
    for (const entry of entries) clearTimeout(entry.idleTimer);
    await Promise.all(entries.map((entry) => entry.thread.close()));
  }

  private idle(modelDir: string, entry: { thread: TrainerThread; idleTimer: NodeJS.Timeout | undefined }): void {
    if (this.threads.get(modelDir) !== entry) return;
    if (!entry.thread.alive) {
      this.threads.delete(modelDir);
      return;
    }
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      if (entry.thread.busy || this.threads.get(modelDir) !== entry) return;
      this.threads.delete(modelDir);
      void entry.thread.close("it was idle");
    }, this.options.idleMs);
    entry.idleTimer.unref();
  }
}
