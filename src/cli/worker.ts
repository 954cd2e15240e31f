import { loadConfig } from "../config.js";
import { parseCommandArgs } from "./args.js";
import { createJobWorker } from "./job-worker.js";
import { openServices } from "./open-services.js";
import type { WorkerLog } from "../worker/worker.js";

export const workerUsage = `flywheel worker [--data-dir DIR]

Runs training jobs from the database (DATABASE_URL, or the SQLite file in the data dir) and the
data dir's blob store, which it shares with 'flywheel serve --no-worker' and other workers.
Jobs train in a thread per base model, which keeps the model loaded between jobs.
Environment: FLYWHEEL_WORKER_CONCURRENCY (2), FLYWHEEL_JOB_POLL_MS (1000), FLYWHEEL_JOB_LEASE_MS
(30000), FLYWHEEL_JOB_MAX_ATTEMPTS (3), FLYWHEEL_TRAIN_STEP_DELAY_MS (0), FLYWHEEL_TRAINER_IDLE_MS
(300000), FLYWHEEL_MODELS, FLYWHEEL_KERNELS.`;

export async function workerCommand(args: string[]): Promise<void> {
  const { values } = parseCommandArgs(args, { "data-dir": { type: "string" } });
  const config = loadConfig(values);
  const services = await openServices(config);
  const worker = createJobWorker(services, jsonLineLog(config.logLevel));
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(JSON.stringify({ level: "info", time: Date.now(), signal, msg: "shutting down" }));
    await worker.stop();
    await services.store.close();
    console.log(JSON.stringify({ level: "info", time: Date.now(), msg: "stopped" }));
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  worker.start();
  console.log(`Flywheel worker ${worker.id} (database: ${services.store.location})`);
}

/** One JSON object per line on stdout, like the server's logs. */
function jsonLineLog(level: string): WorkerLog {
  const quiet = level === "warn" || level === "error" || level === "silent";
  const write = (name: string, obj: object, msg: string) => {
    const fields = Object.fromEntries(Object.entries(obj).map(([key, value]) => [key, value instanceof Error ? { message: value.message, stack: value.stack } : value]));
    console.log(JSON.stringify({ level: name, time: Date.now(), ...fields, msg }));
  };
  return {
    info: (obj, msg) => {
      if (!quiet) write("info", obj, msg);
    },
    warn: (obj, msg) => {
      if (level !== "error" && level !== "silent") write("warn", obj, msg);
    },
    error: (obj, msg) => {
      if (level !== "silent") write("error", obj, msg);
    },
  };
}
