import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { ModelCatalog } from "../../../engine/catalog.js";
import { CheckpointError } from "../../../engine/checkpoint/errors.js";
import { readModelConfig } from "../../../engine/checkpoint/model-config.js";
import { loadLoraAdapter } from "../../../engine/lora/files.js";
import { ApiError } from "../../errors.js";

/**
 * LoRA adapters loaded by path at run time through vLLM's `/v1/load_lora_adapter`, so that this
 * server can stand in for vLLM as another Flywheel's upstream. Like vLLM they live in memory (a
 * restart forgets them) and are served under their `lora_name`; unlike vLLM each belongs to the
 * entity of the key that loaded it, which alone can use or unload it.
 */
export interface RuntimeAdapter {
  name: string;
  dir: string;
  baseModelId: string;
  /** Unique per load, so a name loaded again from another path never reuses a cached adapter. */
  id: string;
  created: number;
}

export class RuntimeAdapters {
  private readonly byEntity = new Map<string, Map<string, RuntimeAdapter>>();

  get(entity: string, name: string | null | undefined): RuntimeAdapter | undefined {
    return name ? this.byEntity.get(entity)?.get(name) : undefined;
  }

  list(entity: string): RuntimeAdapter[] {
    return [...(this.byEntity.get(entity)?.values() ?? [])];
  }

  /**
   * Checks the adapter against its base model and adds it. The base model is the served model
   * named by `base_model_name_or_path` in adapter_config.json, or the only served model.
   */
  load(entity: string, name: string, adapterPath: string, catalog: Pick<ModelCatalog, "get" | "list">, replace: boolean): RuntimeAdapter {
    const adapters = this.byEntity.get(entity) ?? new Map<string, RuntimeAdapter>();
    if (adapters.has(name) && !replace) throw new ApiError(400, `The lora adapter '${name}' has already been loaded.`, { type: "InvalidUserInput" });
    if (catalog.get(name)) throw new ApiError(400, `The lora adapter name '${name}' is a served base model's id.`, { type: "InvalidUserInput", param: "lora_name" });
    const dir = path.resolve(adapterPath);
    const configFile = path.join(dir, "adapter_config.json");
    if (!fs.existsSync(configFile)) throw new ApiError(404, `No adapter found for ${adapterPath}: ${configFile} does not exist.`, { type: "NotFoundError" });
    const baseModelId = baseModelOf(configFile, catalog);
    try {
      loadLoraAdapter(dir, { config: readModelConfig(catalog.get(baseModelId)!.dir) });
    } catch (error) {
      if (error instanceof CheckpointError) throw new ApiError(400, `The adapter at ${adapterPath} cannot be loaded: ${error.message}`, { type: "BadRequestError" });
      throw error;
    }
    const adapter: RuntimeAdapter = { name, dir, baseModelId, id: `runtime-${randomUUID()}`, created: Math.floor(Date.now() / 1000) };
    adapters.set(name, adapter);
    this.byEntity.set(entity, adapters);
    return adapter;
  }

  unload(entity: string, name: string): void {
    if (!this.byEntity.get(entity)?.delete(name)) throw new ApiError(404, `The lora adapter '${name}' cannot be found.`, { type: "NotFoundError" });
  }
}

function baseModelOf(configFile: string, catalog: Pick<ModelCatalog, "get" | "list">): string {
  let named: unknown;
  try {
    named = (JSON.parse(fs.readFileSync(configFile, "utf8")) as { base_model_name_or_path?: unknown }).base_model_name_or_path;
  } catch (error) {
    throw new ApiError(400, `${configFile} is not valid JSON: ${(error as Error).message}`, { type: "BadRequestError" });
  }
  if (typeof named === "string" && catalog.get(named)) return named;
  const served = catalog.list();
  if (served.length === 1) return served[0]!.id;
  throw new ApiError(
    400,
    `Cannot tell which base model the adapter belongs to: its base_model_name_or_path ${JSON.stringify(named ?? null)} is not a served model, and this server serves ${served.length === 0 ? "none" : served.map((entry) => entry.id).join(", ")}.`,
    { type: "BadRequestError" },
  );
}
