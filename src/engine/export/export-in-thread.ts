import { spawnModuleThread } from "../thread-spawn.js";
import type { ModelExportJob, ModelExportResult } from "./export-model.js";

type ThreadReply = { ok: true; result: ModelExportResult } | { ok: false; message: string; unsupported?: string };

/** The model's files cannot be converted to the asked-for format (e.g. a tokenizer llama.cpp does not implement). */
export class UnsupportedExportError extends Error {}

/**
 * Runs `exportModel` in a worker thread of its own, so a merge of a large model never blocks the
 * event loop. A file the export cannot convert rejects with `UnsupportedExportError`, whose
 * message names the file by its name only.
 */
export function exportModelInThread(job: ModelExportJob): Promise<ModelExportResult> {
  return new Promise((resolve, reject) => {
    const thread = spawnModuleThread(import.meta.url, "./export-thread", { workerData: job });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      outcome();
    };
    thread.once("message", (reply: ThreadReply) => {
      settle(() => {
        if (reply.ok) resolve(reply.result);
        else reject(reply.unsupported ? new UnsupportedExportError(reply.unsupported) : new Error(`export failed: ${reply.message}`));
      });
      void thread.terminate();
    });
    thread.once("error", (error) => settle(() => reject(error)));
    thread.once("exit", (code) => settle(() => reject(new Error(`the export thread exited with code ${code} before it finished`))));
  });
}
