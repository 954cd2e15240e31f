import { parentPort, workerData } from "node:worker_threads";
import { exportModel, type ModelExportJob } from "./export-model.js";

/** Worker-thread entry: runs one export (model math stays off the server's event loop) and reports back. */
const job = workerData as ModelExportJob;
try {
  parentPort!.postMessage({ ok: true, result: exportModel(job) });
} catch (error) {
  parentPort!.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
}
