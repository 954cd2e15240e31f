import fs from "node:fs";
import path from "node:path";

/** A served base model: a Hugging Face checkpoint directory found under a model root. */
export interface CatalogEntry {
  /** The name clients pass as `model`: the directory's path below its root, e.g. `flywheel/tiny-chat`. */
  id: string;
  dir: string;
  /** `model_type` from config.json (llama, qwen2, qwen3, …), or undefined if unreadable. */
  modelType: string | undefined;
  /** Modification time of config.json, as a Unix timestamp in seconds. */
  created: number;
}

const MAX_DEPTH = 3;

/**
 * The base models this service serves, found by scanning the configured roots. A root that is itself
 * a model directory serves that model under its directory name. Earlier roots win on clashing ids.
 * Scans are cheap (a few directory reads), so lookups of an unknown id rescan: a model copied into
 * the data directory is served without a restart.
 */
export class ModelCatalog {
  private entries = new Map<string, CatalogEntry>();

  constructor(private readonly roots: string[]) {
    this.refresh();
  }

  refresh(): void {
    const found = new Map<string, CatalogEntry>();
    for (const root of this.roots) {
      if (isModelDir(root)) {
        addEntry(found, path.basename(root), root);
        continue;
      }
      scan(root, root, 0, found);
    }
    this.entries = found;
  }

  list(): CatalogEntry[] {
    return [...this.entries.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  get(id: string): CatalogEntry | undefined {
    const hit = this.entries.get(id);
    if (hit) return hit;
    this.refresh();
    return this.entries.get(id);
  }
}

function isModelDir(dir: string): boolean {
  return fs.existsSync(path.join(dir, "config.json"));
}

function scan(root: string, dir: string, depth: number, found: Map<string, CatalogEntry>): void {
  if (depth >= MAX_DEPTH) return;
  let children: fs.Dirent[];
  try {
    children = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const child of children) {
    if (!child.isDirectory() || child.name.startsWith(".")) continue;
    const childDir = path.join(dir, child.name);
    if (isModelDir(childDir)) {
      addEntry(found, path.relative(root, childDir).split(path.sep).join("/"), childDir);
    } else {
      scan(root, childDir, depth + 1, found);
    }
  }
}

function addEntry(found: Map<string, CatalogEntry>, id: string, dir: string): void {
  if (found.has(id)) return;
  const configPath = path.join(dir, "config.json");
  let modelType: string | undefined;
  try {
    const config = JSON.parse(fs.readFileSync(configPath, "utf8")) as { model_type?: unknown };
    modelType = typeof config.model_type === "string" ? config.model_type : undefined;
  } catch {
    modelType = undefined;
  }
  found.set(id, { id, dir, modelType, created: Math.floor(fs.statSync(configPath).mtimeMs / 1000) });
}
