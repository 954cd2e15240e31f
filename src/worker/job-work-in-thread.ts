import { spawnModuleThread } from "../engine/thread-spawn.js";
import { encodeJobWork, openJobWork } from "../engine/train/job/encoded-work.js";
import type { RlJobWork } from "../engine/train/job/types.js";
import type { JobWork, StoredJobWork } from "./job-input.js";
import type { DecodedJobWork, RunWork, SftWork } from "./trainer.js";
import { packStoredWork } from "./stored-work-transfer.js";
import { summarizeTrainability } from "./trajectories.js";

export type JobWorkThreadReply = { ok: true; work: DecodedJobWork } | { ok: false; message: string };

/**
 * Decodes a job's stored input (`decodeJobWork`: parsing its JSON, reading SFT rows) on a worker
 * thread of its own, as its plan for the worker pool is made (D-TRAIN-038): a job of thousands of
 * trajectories took a second or more of the event loop to parse, and as long again to hand its
 * objects to the trainer thread. The answer is the work's description with its data encoded
 * (`describeJobWork`), transferred, not copied, as the input's text is on the way in
 * (`packStoredWork`); a data error rejects with its message.
 */
export function decodeJobWorkInThread(stored: StoredJobWork): Promise<DecodedJobWork> {
  return new Promise((resolve, reject) => {
    const { packed, transferList } = packStoredWork(stored);
    const thread = spawnModuleThread(import.meta.url, "./job-work-thread", { workerData: packed, transferList });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      outcome();
      void thread.terminate();
    };
    thread.once("message", (reply: JobWorkThreadReply) => settle(() => (reply.ok ? resolve(reply.work) : reject(new Error(reply.message)))));
    thread.once("error", (error: Error) => settle(() => reject(new Error(`reading the job's input failed: ${error.message}`))));
    thread.once("exit", (code) => settle(() => reject(new Error(`the thread reading the job's input exited with code ${code} before it finished`))));
  });
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
