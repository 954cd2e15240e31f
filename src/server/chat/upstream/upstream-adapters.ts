import fs from "node:fs";
import path from "node:path";
import type { AdapterRef } from "../../../engine/api.js";
import type { UpstreamClient } from "./upstream-client.js";

/** The PEFT files an upstream needs; the optimizer state stays behind. */
const ADAPTER_FILES = ["adapter_config.json", "adapter_model.safetensors"];

/**
 * Checkpoints served by an upstream: each is loaded there once as a LoRA adapter named after the
 * checkpoint, from a directory the upstream can read. Loads are remembered per upstream (and
 * forgotten when the upstream no longer knows the name, e.g. after it restarted).
 */
export class UpstreamAdapters {
  private readonly loads = new Map<string, Promise<string>>();

  /** The adapter's name on the upstream, loading it there first if needed. */
  ensure(client: UpstreamClient, adapter: AdapterRef): Promise<string> {
    const name = loraNameOf(adapter);
    const key = `${client.config.baseUrl}\n${name}`;
    let load = this.loads.get(key);
    if (!load) {
      load = client.loadAdapter(name, placeAdapter(client, adapter)).then(() => name);
      // A failed load is not remembered: the next request tries again.
      load.catch(() => this.loads.delete(key));
      this.loads.set(key, load);
    }
    return load;
  }

  forget(client: UpstreamClient, adapter: AdapterRef): void {
    this.loads.delete(`${client.config.baseUrl}\n${loraNameOf(adapter)}`);
  }
}

/** Checkpoint ids are unique, so the name never refers to two different adapters. */
export function loraNameOf(adapter: AdapterRef): string {
  return `flywheel-${adapter.id}`;
}

/**
 * The adapter's path as the upstream sees it. Without `adapter_dir` that is the checkpoint's own
 * directory in the data dir; with it, the two PEFT files are copied into `<adapter_dir>/<id>/`
 * (through a temporary directory renamed into place, so the upstream never reads half a copy).
 */
export function placeAdapter(client: UpstreamClient, adapter: AdapterRef): string {
  const { adapterDir, upstreamAdapterDir } = client.config;
  const folder = path.basename(adapter.dir);
  let localDir = adapter.dir;
  if (adapterDir !== undefined && path.resolve(adapterDir) !== path.dirname(path.resolve(adapter.dir))) {
    localDir = path.join(adapterDir, folder);
    if (!fs.existsSync(localDir)) {
      const temporary = `${localDir}.tmp-${process.pid}-${Date.now()}`;
      fs.mkdirSync(temporary, { recursive: true });
      for (const file of ADAPTER_FILES) fs.copyFileSync(path.join(adapter.dir, file), path.join(temporary, file));
      try {
        fs.renameSync(temporary, localDir);
      } catch (error) {
        fs.rmSync(temporary, { recursive: true, force: true });
        if (!fs.existsSync(localDir)) throw error;
      }
    }
  }
  return upstreamAdapterDir === undefined ? localDir : path.posix.join(upstreamAdapterDir, folder);
}
