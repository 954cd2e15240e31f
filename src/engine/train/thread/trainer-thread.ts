import type { Worker } from "node:worker_threads";
import { spawnModuleThread } from "../../thread-spawn.js";
import type { TrainerUpdate, TrainingJobSpec } from "../job/types.js";
import type { FromTrainerThread, ToTrainerThread, TrainerThreadInit } from "./protocol.js";
import { UpdateChannel } from "./update-channel.js";

/**
 * One trainer thread, seen from the thread that owns it: it trains adapters of one base model,
 * one job at a time in the order they were given. Each `run` returns the job's updates as they
 * arrive. The thread keeps the process alive only while it has jobs.
 */
export class TrainerThread {
  private readonly worker: Worker;
  private readonly runs = new Map<number, UpdateChannel<TrainerUpdate>>();
  private nextRunId = 0;
  private exitReason: string | undefined;
  private readonly exited: Promise<void>;
  /** Called whenever the thread has no job left (after the last one ended, or when it stopped). */
  onIdle: (() => void) | undefined;

  constructor(readonly init: TrainerThreadInit) {
    this.worker = spawnModuleThread(import.meta.url, "./trainer-worker", { workerData: init });
    this.worker.unref();
    this.worker.on("message", (message: FromTrainerThread) => this.receive(message));
    let crash: Error | undefined;
    this.worker.on("error", (error) => (crash = error));
    this.exited = new Promise((resolve) => {
      this.worker.once("exit", (code) => {
        this.exitReason ??= crash ? `it crashed: ${crash.message}` : `it exited with code ${code}`;
        const error = new Error(`the trainer thread of ${init.modelDir} stopped: ${this.exitReason}`);
        for (const channel of this.runs.values()) channel.fail(error);
        this.runs.clear();
        this.onIdle?.();
        resolve();
      });
    });
  }

  get alive(): boolean {
    return this.exitReason === undefined;
  }

  get busy(): boolean {
    return this.runs.size > 0;
  }

  /**
   * Queues a job and returns its updates. Aborting `signal` cancels it: the iteration ends at once
   * with the abort reason, and the thread stops the job before its next step.
   */
  run(spec: TrainingJobSpec, signal: AbortSignal): AsyncIterable<TrainerUpdate> {
    const channel = new UpdateChannel<TrainerUpdate>();
    if (!this.alive) {
      channel.fail(new Error(`the trainer thread of ${this.init.modelDir} is not running`));
      return channel;
    }
    const runId = this.nextRunId++;
    this.runs.set(runId, channel);
    this.worker.ref();
    this.post({ type: "run", runId, spec });
    const cancel = (end: (run: UpdateChannel<TrainerUpdate>) => void) => {
      if (!this.runs.has(runId)) return;
      this.post({ type: "cancel", runId });
      this.settle(runId, end);
    };
    const onAbort = () => cancel((run) => run.fail(signal.reason));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    return {
      async *[Symbol.asyncIterator]() {
        try {
          yield* channel;
        } finally {
          // The consumer stopped early (or the run ended): a job nobody follows must not keep training.
          signal.removeEventListener("abort", onAbort);
          cancel((run) => run.end());
        }
      },
    };
  }

  /** Stops the thread now; jobs still queued or running fail. */
  async close(reason = "it was closed"): Promise<void> {
    this.exitReason ??= reason;
    await this.worker.terminate();
    await this.exited;
  }

  private receive(message: FromTrainerThread): void {
    const channel = this.runs.get(message.runId);
    if (!channel) return;
    if (message.type === "update") {
      channel.push(message.update);
      if (message.update.type === "finished") this.settle(message.runId, (run) => run.end());
    } else if (message.type === "failed") {
      this.settle(message.runId, (run) => run.fail(new Error(message.message)));
    } else {
      this.settle(message.runId, (run) => run.fail(new Error("the training job was cancelled")));
    }
  }

  private settle(runId: number, end: (channel: UpdateChannel<TrainerUpdate>) => void): void {
    const channel = this.runs.get(runId);
    if (!channel) return;
    this.runs.delete(runId);
    end(channel);
    if (this.runs.size === 0) {
      this.worker.unref();
      this.onIdle?.();
    }
  }

  private post(message: ToTrainerThread): void {
    if (this.alive) this.worker.postMessage(message);
  }
}
