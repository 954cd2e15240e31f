import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * Starts a worker thread on the module `entry` (a path relative to `from`, without extension).
 * Built code runs the compiled `.js`. Running from TypeScript sources (tests, `tsx`), the thread
 * first registers tsx's loader, which Node's `--import` does not do for a worker's entry module.
 */
export function spawnModuleThread(from: string, entry: string, options: Omit<WorkerOptions, "eval"> = {}): Worker {
  const fromSource = from.endsWith(".ts");
  const url = new URL(`${entry}.${fromSource ? "ts" : "js"}`, from);
  if (!fromSource) return new Worker(url, options);
  const tsx = pathToFileURL(tsxEsmApi()).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** tsx's ESM loader API (its CommonJS build registers a loader path that does not exist). */
function tsxEsmApi(): string {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve("tsx/package.json");
  const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as { exports: Record<string, { import: { default: string } }> };
  return path.join(path.dirname(manifestPath), manifest.exports["./esm/api"]!.import.default);
}
