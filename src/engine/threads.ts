import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * Starts the module `name` (a sibling of the module at `fromUrl`, e.g. `./engine-worker`) in a new
 * worker thread. Built code runs the compiled `.js`; from TypeScript sources (tests, `tsx`) the
 * thread first registers tsx's loader, which Node's `--import` cannot do for a worker's entry module.
 */
export function spawnModuleWorker(fromUrl: string, name: string, workerData: unknown): Worker {
  const fromSource = fromUrl.endsWith(".ts");
  const entry = new URL(`${name}.${fromSource ? "ts" : "js"}`, fromUrl);
  if (!fromSource) return new Worker(entry, { workerData });
  const tsx = pathToFileURL(tsxEsmApi()).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** tsx's ESM loader API (its CommonJS build registers a loader path that does not exist). */
function tsxEsmApi(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve("tsx/package.json");
  const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as { exports: Record<string, { import: { default: string } }> };
  return path.join(path.dirname(manifestPath), manifest.exports["./esm/api"]!.import.default);
}
