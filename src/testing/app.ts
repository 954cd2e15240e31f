import fs from "node:fs";
import path from "node:path";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { loadConfig } from "../config.js";
import { ModelCatalog } from "../engine/catalog.js";
import type { EngineRegistry } from "../engine/runtime/engine-registry.js";
import { createEngineRegistry, createTemplatePool } from "../cli/open-services.js";
import { type AppServices, buildApp } from "../server/app.js";
import { templateRendererOn } from "../server/chat/pipeline/engine-template.js";
import type { RemoteDataLimits } from "../worker/remote-data.js";
import type { Trainer } from "../worker/trainer.js";
import { builtInWorkerFilter } from "../worker/routing.js";
import { JobWorker, type WorkerLog, type WorkerSettings } from "../worker/worker.js";
import { type BlobStore, LocalBlobStore } from "../store/blobs.js";
import type { DialectName } from "../store/db.js";
import { createApiKey } from "../store/keys.js";
import { openTestStore, type TestStore } from "./stores.js";

export interface TestApp {
  app: FastifyInstance;
  /** The engines behind the chat endpoint, when the app was started with `servedModels`. */
  engines: EngineRegistry | undefined;
  store: TestStore;
  /** The blob store the app uses (checkpoint files, artifacts). */
  blobs: BlobStore;
  dataDir: string;
  /** Keys of two entities, to prove tenant isolation, and a worker key for the worker protocol. */
  keys: { alice: string; bob: string; worker: string };
  /** The in-process job worker, when the options asked for one. */
  worker: JobWorker | undefined;
  /** `app.inject` with `Authorization: Bearer <key>`. */
  request(key: string, options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Base-model directories to create under the data dir, by id (e.g. `test/base`). */
  baseModels?: string[];
  /**
   * Real models to serve, by id → a checkpoint directory to copy into the data dir. With any, the
   * app gets real engines (started on first use, closed with the app).
   */
  servedModels?: Record<string, string>;
  env?: Record<string, string>;
  /** The built web UI to serve (default: the package's dist/ui). */
  uiDir?: string;
  /** Runs an in-process job worker with these settings (jobs stay queued without one). */
  worker?: Partial<WorkerSettings> & { stepDelayMs?: number; trainer?: Trainer; remoteData?: RemoteDataLimits };
}

const quietLog: WorkerLog = { info() {}, warn() {}, error() {} };

/** Writes a model directory that the catalog serves under `id`. */
export function writeBaseModelDir(modelsRoot: string, id: string, config: Record<string, unknown> = { model_type: "qwen2" }): string {
  const dir = path.join(modelsRoot, ...id.split("/"));
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify(config));
  return dir;
}

/** A complete app on a fresh store of the given dialect, with two entities' keys. */
export async function startTestApp(dialect: DialectName, options: TestAppOptions = {}): Promise<TestApp> {
  const store = await openTestStore(dialect);
  const config = loadConfig({ "data-dir": store.dataDir }, { ...options.env });
  for (const id of options.baseModels ?? ["test/base"]) writeBaseModelDir(path.join(store.dataDir, "models"), id);
  const served = Object.entries(options.servedModels ?? {});
  for (const [id, dir] of served) fs.cpSync(dir, path.join(store.dataDir, "models", ...id.split("/")), { recursive: true });
  const catalog = new ModelCatalog(config.modelDirs);
  // Configured as `serve` configures them (FLYWHEEL_PRIORITY_MODELS, FLYWHEEL_MAX_NUM_SEQS, …, from `env`).
  const engines = served.length > 0 ? createEngineRegistry(config, catalog) : undefined;
  const services: AppServices = { config, store, blobs: new LocalBlobStore(store.dataDir), catalog };
  const templatePool = engines ? createTemplatePool(config) : undefined;
  if (engines && templatePool) services.engines = { get: (id) => engines.get(id), renderChatTemplate: templateRendererOn(templatePool) };
  // Every answer the tests provoke is checked against the schema /openapi.json documents for it.
  const app = await buildApp(services, { uiDir: options.uiDir, checkResponses: true });
  await app.ready();
  let worker: JobWorker | undefined;
  if (options.worker) {
    const { trainer, stepDelayMs = 0, remoteData, ...settings } = options.worker;
    worker = new JobWorker(
      { store, blobs: services.blobs, catalog: services.catalog, trainer, stepDelayMs, remoteData },
      { concurrency: 2, pollMs: 50, leaseMs: 5000, maxAttempts: 3, baseModels: builtInWorkerFilter(config.jobs), ...settings },
      quietLog,
    );
    services.onJobQueued = () => worker?.wake();
    worker.start();
  }
  const alice = (await createApiKey(store.db, "alice")).key;
  const bob = (await createApiKey(store.db, "bob")).key;
  const workerKey = (await createApiKey(store.db, "default", { name: "test worker", role: "worker" })).key;
  return {
    app,
    engines,
    store,
    blobs: services.blobs,
    dataDir: store.dataDir,
    keys: { alice, bob, worker: workerKey },
    worker,
    request: (key, request) => app.inject({ ...request, headers: { authorization: `Bearer ${key}`, ...request.headers } }),
    async close() {
      await worker?.stop();
      await app.close();
      await engines?.close();
      await templatePool?.close();
      await store.close();
    },
  };
}
