import { parentPort, workerData } from "node:worker_threads";
import { decodeJobWork } from "./job-input.js";
import { describeJobWork, type JobWorkThreadReply } from "./job-work-in-thread.js";
import { type PackedStoredWork, unpackStoredWork } from "./stored-work-transfer.js";

/**
 * Worker-thread entry (`decodeJobWorkInThread`): decodes one job's stored work and answers its
 * description, the encoded data transferred in one buffer.
 */
let reply: JobWorkThreadReply;
try {
  const work = describeJobWork(decodeJobWork(unpackStoredWork(workerData as PackedStoredWork)));
  // A buffer of its own (v8.serialize may answer a view), so it can be transferred whole.
  work.encoded = new Uint8Array(work.encoded);
  reply = { ok: true, work };
} catch (error) {
  reply = { ok: false, message: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(reply, reply.ok ? [reply.work.encoded.buffer as ArrayBuffer] : []);
