import fs from "node:fs";
import path from "node:path";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { loadConfig } from "../config.js";
import { ModelCatalog } from "../engine/catalog.js";
import { buildApp } from "../server/app.js";
import { LocalBlobStore } from "../store/blobs.js";
import type { DialectName } from "../store/db.js";
import { createApiKey } from "../store/keys.js";
import { openTestStore, type TestStore } from "./stores.js";

export interface TestApp {
  app: FastifyInstance;
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
  const app = await buildApp({ config, store, blobs: new LocalBlobStore(store.dataDir), catalog: new ModelCatalog(config.modelDirs) });
  await app.ready();
  const alice = (await createApiKey(store.db, "alice")).key;
  const bob = (await createApiKey(store.db, "bob")).key;
  return {
    app,
    store,
    dataDir: store.dataDir,
    keys: { alice, bob },
    request: (key, request) => app.inject({ ...request, headers: { authorization: `Bearer ${key}`, ...request.headers } }),
    async close() {
      await app.close();
      await store.close();
    },
  };
}
