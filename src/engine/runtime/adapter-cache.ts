import type { AdapterRef } from "../api.js";
import type { LoadedModel } from "../model/load.js";
import type { LinearAdapter } from "../model/types.js";
import type { AdapterLoader } from "./seams.js";

/**
 * The LoRA adapters an engine has loaded, by identity (`AdapterRef.id`: equal ids mean equal
 * weights), the least recently used dropped beyond `capacity`. A dropped adapter that a running
 * request still holds stays alive with it.
 */
export class AdapterCache {
  private readonly loaded = new Map<string, LinearAdapter>();

  constructor(
    private readonly model: LoadedModel,
    private readonly loader: AdapterLoader,
    private readonly capacity: number,
  ) {}

  get(ref: AdapterRef): LinearAdapter {
    const hit = this.loaded.get(ref.id);
    if (hit) {
      this.loaded.delete(ref.id);
      this.loaded.set(ref.id, hit);
      return hit;
    }
    const adapter = this.loader(ref, this.model);
    this.loaded.set(ref.id, adapter);
    for (const id of this.loaded.keys()) {
      if (this.loaded.size <= this.capacity) break;
      this.loaded.delete(id);
    }
    return adapter;
  }

  get size(): number {
    return this.loaded.size;
  }
}
