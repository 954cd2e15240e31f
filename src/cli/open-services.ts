import type { Config } from "../config.js";
import { ModelCatalog } from "../engine/catalog.js";
import { ChatTemplatePool } from "../engine/chat-template-pool.js";
import { EngineRegistry } from "../engine/runtime/engine-registry.js";
import type { AppServices } from "../server/app.js";
import { templateRendererOn } from "../server/chat/pipeline/engine-template.js";
import { LocalBlobStore } from "../store/blobs.js";
import { openStore } from "../store/db.js";

export interface OpenedServices extends AppServices {
  /** The model engines behind `engines`; closing it stops their threads. */
  engineRegistry: EngineRegistry;
  /** The chat-template rendering threads; closing it stops them. */
  templatePool: ChatTemplatePool;
}

/** Opens the database, blob store, model catalog and (lazily started) engines that `serve` uses. */
export async function openServices(config: Config): Promise<OpenedServices> {
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const catalog = new ModelCatalog(config.modelDirs);
  const engineRegistry = createEngineRegistry(config, catalog);
  const templatePool = createTemplatePool(config);
  return {
    config,
    store,
    blobs: new LocalBlobStore(config.dataDir),
    catalog,
    engines: { get: (baseModelId) => engineRegistry.get(baseModelId), renderChatTemplate: templateRendererOn(templatePool) },
    engineRegistry,
    templatePool,
  };
}

/** Two rendering threads of 256 MiB each, with the configured time and size limits. */
export function createTemplatePool(config: Config): ChatTemplatePool {
  return new ChatTemplatePool({ timeoutMs: config.chat.templateTimeoutMs, maxOutputChars: config.chat.maxPromptChars, memoryMb: 256, threads: 2 });
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
