import type { Config } from "../config.js";
import { ModelCatalog } from "../engine/catalog.js";
import type { AppServices } from "../server/app.js";
import { LocalBlobStore } from "../store/blobs.js";
import { openStore } from "../store/db.js";

/** Opens the database, blob store and model catalog that `serve` and the other commands share. */
export async function openServices(config: Config): Promise<AppServices> {
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  return { config, store, blobs: new LocalBlobStore(config.dataDir), catalog: new ModelCatalog(config.modelDirs) };
}
