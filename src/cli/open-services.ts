import type { Config } from "../config.js";
import { ModelCatalog } from "../engine/catalog.js";
import { EngineRegistry } from "../engine/runtime/engine-registry.js";
import type { AppServices } from "../server/app.js";
import { renderWithModelTemplate } from "../server/chat/engine-template.js";
import { LocalBlobStore } from "../store/blobs.js";
import { openStore } from "../store/db.js";

export interface OpenedServices extends AppServices {
  /** The model engines behind `engines`; closing it stops their threads. */
  engineRegistry: EngineRegistry;
}

/** Opens the database, blob store, model catalog and (lazily started) engines that `serve` uses. */
export async function openServices(config: Config): Promise<OpenedServices> {
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const catalog = new ModelCatalog(config.modelDirs);
  const engineRegistry = createEngineRegistry(config, catalog);
  return {
    config,
    store,
    blobs: new LocalBlobStore(config.dataDir),
    catalog,
    engines: { get: (baseModelId) => engineRegistry.get(baseModelId), renderChatTemplate: renderWithModelTemplate },
    engineRegistry,
  };
}

/** The engine registry configured from FLYWHEEL_PRIORITY_MODELS, FLYWHEEL_MAX_NUM_SEQS and friends. */
export function createEngineRegistry(config: Config, catalog: ModelCatalog): EngineRegistry {
  const { engine } = config;
  return new EngineRegistry(catalog, {
    priorityModels: engine.priorityModels,
    scheduler: {
      maxRunningSequences: engine.maxRunningSequences,
      maxTokensPerStep: engine.maxTokensPerStep,
      kvCacheBytes: engine.kvCacheBytes,
      prefixCacheBytes: engine.prefixCacheBytes,
    },
  });
}
