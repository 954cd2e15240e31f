import fs from "node:fs";
import path from "node:path";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { loadConfig } from "../config.js";
import { ModelCatalog } from "../engine/catalog.js";
import { EngineRegistry } from "../engine/runtime/engine-registry.js";
import { buildApp } from "../server/app.js";
import { renderWithModelTemplate } from "../server/chat/engine-template.js";
import { LocalBlobStore } from "../store/blobs.js";
import type { DialectName } from "../store/db.js";
import { createApiKey } from "../store/keys.js";
import { openTestStore, type TestStore } from "./stores.js";

export interface TestApp {
  app: FastifyInstance;
  /** The engines behind the chat endpoint, when the app was started with `servedModels`. */
  engines: EngineRegistry | undefined;
  store: TestStore;
  dataDir: string;
  /** Keys of two entities, to prove tenant isolation. */
  keys: { alice: string; bob: string };
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
}

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
  const engines = served.length > 0 ? new EngineRegistry(catalog, { priorityModels: config.engine.priorityModels }) : undefined;
  const app = await buildApp({
    config,
    store,
    blobs: new LocalBlobStore(store.dataDir),
    catalog,
    ...(engines ? { engines: { get: (id: string) => engines.get(id), renderChatTemplate: renderWithModelTemplate } } : {}),
  });
  await app.ready();
  const alice = (await createApiKey(store.db, "alice")).key;
  const bob = (await createApiKey(store.db, "bob")).key;
  return {
    app,
    engines,
    store,
    dataDir: store.dataDir,
    keys: { alice, bob },
    request: (key, request) => app.inject({ ...request, headers: { authorization: `Bearer ${key}`, ...request.headers } }),
    async close() {
      await app.close();
      await engines?.close();
      await store.close();
    },
  };
}
