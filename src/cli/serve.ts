import { loadConfig } from "../config.js";
import { buildApp } from "../server/app.js";
import { countLiveApiKeys, createApiKey, ensureApiKey } from "../store/keys.js";
import type { Store } from "../store/db.js";
import { parseCommandArgs } from "./args.js";
import { createJobWorker } from "./job-worker.js";
import { openServices } from "./open-services.js";

export const serveUsage = `flywheel serve [--port N] [--host ADDR] [--data-dir DIR] [--no-worker] [--trust-request-chat-template]

Serves the chat, training and trace APIs, and runs training jobs in-process unless --no-worker
(or FLYWHEEL_SERVE_WORKER=0) leaves them to 'flywheel worker' processes.
--trust-request-chat-template (or FLYWHEEL_TRUST_REQUEST_CHAT_TEMPLATE=1) renders the chat_template
a request sends; without it such requests are refused, as vLLM does. Environment:
FLYWHEEL_PORT, FLYWHEEL_HOST, FLYWHEEL_DATA_DIR, DATABASE_URL (PostgreSQL; unset = SQLite in the
data dir), FLYWHEEL_API_KEY, FLYWHEEL_MODELS, FLYWHEEL_BODY_LIMIT_MB, FLYWHEEL_TRACE_BASE_PATH,
FLYWHEEL_LOG_LEVEL, FLYWHEEL_KERNELS, the engine settings (FLYWHEEL_PRIORITY_MODELS,
FLYWHEEL_MAX_NUM_SEQS, FLYWHEEL_MAX_BATCHED_TOKENS, FLYWHEEL_KV_CACHE_MB, FLYWHEEL_PREFIX_CACHE_MB)
and the job settings of 'flywheel worker'.`;

export async function serveCommand(args: string[]): Promise<void> {
  const { values } = parseCommandArgs(args, { port: { type: "string" }, host: { type: "string" }, "data-dir": { type: "string" }, "no-worker": { type: "boolean" }, "trust-request-chat-template": { type: "boolean" } });
  const config = loadConfig(values);
  const services = await openServices(config);
  await ensureStartupKey(services.store, config.apiKey);

  const app = await buildApp(services, { logger: { level: config.logLevel } });
  const worker = config.jobs.inProcessWorker ? createJobWorker(services, app.log) : undefined;
  services.onJobQueued = () => worker?.wake();
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, "shutting down");
    await app.close();
    await worker?.stop();
    await services.engineRegistry.close();
    await services.templatePool.close();
    await services.store.close();
    app.log.info("stopped");
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));

  const address = await app.listen({ port: config.port, host: config.host });
  worker?.start();
  app.log.info({ address, database: services.store.dialect, dataDir: config.dataDir, jobWorker: worker?.id ?? null }, "listening");
  console.log(`Flywheel ${address} (database: ${services.store.location})`);
}

/** FLYWHEEL_API_KEY is made to exist; otherwise an empty database gets one key for `default`, shown once. */
async function ensureStartupKey(store: Store, apiKey: string | undefined): Promise<void> {
  if (apiKey) {
    await ensureApiKey(store.db, apiKey, "default");
    return;
  }
  if ((await countLiveApiKeys(store.db)) > 0) return;
  const created = await createApiKey(store.db, "default", { name: "first start" });
  console.log(
    ["No API key existed, so one was created for entity 'default'. It is shown only this once:", "", `  ${created.key}`, "", "Send it as 'Authorization: Bearer <key>'. More keys: flywheel keys create --entity NAME"].join("\n"),
  );
}
