import { parentPort } from "node:worker_threads";
import { decodeJobWork } from "./job-input.js";
import { describeJobWork, type JobWorkThreadAnswer, type JobWorkThreadReply, type JobWorkThreadRequest } from "./job-work-in-thread.js";
import { unpackStoredWork } from "./stored-work-transfer.js";

/**
 * Worker-thread entry (`decodeJobWorkInThread`): decodes each job's stored work it is sent, one
 * after another, and answers its description, the encoded data transferred in one buffer.
 */
parentPort!.on("message", ({ id, packed }: JobWorkThreadRequest) => {
  let reply: JobWorkThreadReply;
  try {
    const work = describeJobWork(decodeJobWork(unpackStoredWork(packed)));
    // A buffer of its own (v8.serialize may answer a view), so it can be transferred whole.
    work.encoded = new Uint8Array(work.encoded);
    reply = { ok: true, work };
  } catch (error) {
    reply = { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage({ id, reply } satisfies JobWorkThreadAnswer, reply.ok ? [reply.work.encoded.buffer as ArrayBuffer] : []);
});
