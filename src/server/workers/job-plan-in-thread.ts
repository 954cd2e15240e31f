import { spawnModuleThread } from "../../engine/thread-spawn.js";
import type { StoredJobWork } from "../../worker/job-input.js";
import { packStoredWork, type PackedStoredWork } from "../../worker/stored-work-transfer.js";
import type { JobPlanContext } from "./job-plan.js";
import type { ThreadSlots } from "./thread-slots.js";

export interface JobPlanThreadRequest {
  /** The base model's directory: its tokenizer, chat template and config. */
  modelDir: string;
  work: StoredJobWork;
  context: JobPlanContext;
}

/** What the planning thread receives: the request, its work packed for the crossing. */
export type JobPlanThreadData = Omit<JobPlanThreadRequest, "work"> & { work: PackedStoredWork };

export type JobPlanThreadReply = { ok: true; json: Uint8Array } | { ok: false; message: string };

/** The job's data could not be planned (a bad row, a token outside the vocabulary, more memory than allowed, …). */
export class JobPlanError extends Error {}

/**
 * Plans a job (`planJob`) on a worker thread of its own, as a model export runs, so a job of
 * thousands of long trajectories never blocks the event loop: the thread decodes the stored input,
 * tokenizes, packs and serializes, and the answer is the plan's JSON bytes. A plan that needs more
 * than `memoryMb` of heap stops its thread and rejects, like any planning failure, with a
 * `JobPlanError`. At most `slots.limit` plans run at once (FLYWHEEL_JOB_PLAN_THREADS); the rest wait
 * for a slot before their thread starts.
 */
export function planJobInThread(request: JobPlanThreadRequest, limits: { memoryMb: number; slots: ThreadSlots }): Promise<Buffer> {
  return limits.slots.run(() => planInNewThread(request, limits.memoryMb));
}

function planInNewThread(request: JobPlanThreadRequest, memoryMb: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // The job's input text travels as transferred bytes (packStoredWork), not as a copied string.
    const { packed, transferList } = packStoredWork(request.work);
    const thread = spawnModuleThread(import.meta.url, "./job-plan-thread", {
      workerData: { ...request, work: packed } satisfies JobPlanThreadData,
      transferList,
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(64, memoryMb) },
    });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      outcome();
      void thread.terminate();
    };
    thread.once("message", (reply: JobPlanThreadReply) => settle(() => (reply.ok ? resolve(Buffer.from(reply.json.buffer, reply.json.byteOffset, reply.json.byteLength)) : reject(new JobPlanError(reply.message)))));
    thread.once("error", (error: Error & { code?: string }) =>
      settle(() =>
        reject(new JobPlanError(error.code === "ERR_WORKER_OUT_OF_MEMORY" ? `planning the job needed more than this server's ${memoryMb} MiB (FLYWHEEL_JOB_PLAN_MEMORY_MB)` : `planning the job failed: ${error.message}`)),
      ),
    );
    thread.once("exit", (code) => settle(() => reject(new JobPlanError(`the planning thread exited with code ${code} before it finished`))));
  });
}
