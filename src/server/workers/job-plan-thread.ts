import { parentPort, workerData } from "node:worker_threads";
import { loadModelFiles } from "../../engine/model/load.js";
import { decodeJobWork } from "../../worker/job-input.js";
import { unpackStoredWork } from "../../worker/stored-work-transfer.js";
import type { JobPlanThreadData, JobPlanThreadReply } from "./job-plan-in-thread.js";
import { planJob } from "./job-plan.js";

/**
 * Worker-thread entry (`planJobInThread`): decodes one job's stored work, plans it with the base
 * model's tokenizer and chat template, and answers with the plan already serialized as JSON (one
 * transferred buffer), so the event loop neither parses the job's input, nor tokenizes and packs
 * it, nor stringifies the answer.
 */
const request = workerData as JobPlanThreadData;
let reply: JobPlanThreadReply;
try {
  const plan = planJob(loadModelFiles(request.modelDir), decodeJobWork(unpackStoredWork(request.work)), request.context);
  reply = { ok: true, json: new TextEncoder().encode(JSON.stringify(plan)) };
} catch (error) {
  reply = { ok: false, message: error instanceof Error ? error.message : String(error) };
}
parentPort!.postMessage(reply, reply.ok ? [reply.json.buffer as ArrayBuffer] : []);
