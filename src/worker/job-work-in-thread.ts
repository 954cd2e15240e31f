import type { Worker } from "node:worker_threads";
import { spawnModuleThread } from "../engine/thread-spawn.js";
import { encodeJobWork, openJobWork } from "../engine/train/job/encoded-work.js";
import type { RlJobWork } from "../engine/train/job/types.js";
import type { JobWork, StoredJobWork } from "./job-input.js";
import type { DecodedJobWork, RunWork, SftWork } from "./trainer.js";
import { type PackedStoredWork, packStoredWork } from "./stored-work-transfer.js";
import { summarizeTrainability } from "./trajectories.js";

export type JobWorkThreadReply = { ok: true; work: DecodedJobWork } | { ok: false; message: string };

/**
 * Decodes a job's stored input (`decodeJobWork`: parsing its JSON, reading SFT rows) on a worker
 * thread (`DecoderThread`), as its plan for the worker pool is made (D-TRAIN-038): a job of thousands of
 * trajectories took a second or more of the event loop to parse, and as long again to hand its
 * objects to the trainer thread. The answer is the work's description with its data encoded
 * (`describeJobWork`), transferred, not copied, as the input's text is on the way in
 * (`packStoredWork`); a data error rejects with its message.
 */
export function decodeJobWorkInThread(stored: StoredJobWork): Promise<DecodedJobWork> {
  decoder ??= new DecoderThread();
  return decoder.decode(stored);
}

/** A request to the decoding thread, and its answer (the same `id`). */
export interface JobWorkThreadRequest {
  id: number;
  packed: PackedStoredWork;
}
export interface JobWorkThreadAnswer {
  id: number;
  reply: JobWorkThreadReply;
}

let decoder: DecoderThread | undefined;

/**
 * One long-lived thread that decodes jobs' inputs one after another. Starting a thread (loading
 * the decoder's modules) costs about half a second of CPU, which a small job spent again each
 * time. If the thread dies (say, out of memory on a huge input), the jobs waiting on it fail
 * with that reason and the next job starts a new one. Unreferenced while idle, so it keeps no
 * process alive.
 */
class DecoderThread {
  private thread: Worker | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (work: DecodedJobWork) => void; reject: (error: Error) => void }>();

  decode(stored: StoredJobWork): Promise<DecodedJobWork> {
    const { packed, transferList } = packStoredWork(stored);
    const thread = this.started();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      thread.ref();
      thread.postMessage({ id, packed } satisfies JobWorkThreadRequest, transferList);
    });
  }

  private started(): Worker {
    if (this.thread) return this.thread;
    const thread = spawnModuleThread(import.meta.url, "./job-work-thread");
    thread.unref();
    thread.on("message", ({ id, reply }: JobWorkThreadAnswer) => {
      const waiter = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) thread.unref();
      if (reply.ok) waiter?.resolve(reply.work);
      else waiter?.reject(new Error(reply.message));
    });
    const fail = (error: Error) => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
      void thread.terminate();
    };
    thread.on("error", (error: Error) => fail(new Error(`reading the job's input failed: ${error.message}`)));
    thread.on("exit", (code) => fail(new Error(`the thread reading the job's input exited with code ${code} before it finished`)));
    this.thread = thread;
    return thread;
  }
}

/** What the runner needs of decoded work, with the data encoded for the trainer's thread. */
export function describeJobWork(work: JobWork): DecodedJobWork {
  if (work.kind === "rl") {
    const { numTrainableTrajectories } = summarizeTrainability(work.groups, work.config.allow_training_without_logprobs);
    return { kind: "rl", config: work.config, trainableTrajectories: numTrainableTrajectories, encoded: encodeJobWork({ kind: "rl", groups: work.groups, config: work.config }) };
  }
  // The SFT metadata is the job system's; it does not cross into the trainer.
  return { kind: "sft", config: work.config, fileName: work.fileName, rows: work.rows.length, metadata: work.metadata, encoded: encodeJobWork({ kind: "sft", rows: work.rows, fileName: work.fileName, config: work.config }) };
}

/** The work itself, decoded on the calling thread: for trainers that run their own way (and tests). */
export function openRunWork(work: RunWork): RlJobWork | SftWork {
  const history = work.kind === "rl" ? work.rewardStdDevHistory : [];
  const opened = openJobWork({ kind: "encoded", bytes: work.encoded, rewardStdDevHistory: history });
  // The rows were an SftWork's when they were encoded.
  return opened.kind === "rl" ? opened : { ...opened, rows: opened.rows as SftWork["rows"], metadata: work.kind === "sft" ? work.metadata : null };
}
