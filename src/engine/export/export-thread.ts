import path from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { CheckpointError } from "../checkpoint/errors.js";
import { exportModel, type ModelExportJob } from "./export-model.js";

/** Worker-thread entry: runs one export (model math stays off the server's event loop) and reports back. */
const job = workerData as ModelExportJob;
try {
  parentPort!.postMessage({ ok: true, result: exportModel(job) });
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  // A file the export cannot convert: said by file name and field, without this machine's paths.
  const unsupported = error instanceof CheckpointError ? `${path.basename(error.file)}: ${message.startsWith(`${error.file}: `) ? message.slice(error.file.length + 2) : message}` : undefined;
  parentPort!.postMessage({ ok: false, message, unsupported });
}
