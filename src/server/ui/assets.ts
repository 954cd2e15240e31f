import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Where `npm run build` puts the web UI (src/ui/build.mjs), from src/server/ui or dist/server/ui alike. */
export const DEFAULT_UI_DIR = fileURLToPath(new URL("../../../dist/ui", import.meta.url));

export interface UiAsset {
  body: Buffer;
  /** The build's gzipped copy, sent to clients that accept gzip. */
  gzip: Buffer | undefined;
  contentType: string;
}

export interface UiAssets {
  /** index.html with the trace API's base path filled in. */
  indexHtml: string;
  /** Hashed assets by URL path (`/assets/main-XXXX.js`). */
  files: Map<string, UiAsset>;
}

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
};

/** Reads a built UI into memory (it is small), or undefined when the folder holds no build. */
export function loadUiAssets(dir: string, traceBasePath: string): UiAssets | undefined {
  const indexFile = path.join(dir, "index.html");
  if (!fs.existsSync(indexFile)) return undefined;
  const indexHtml = fs.readFileSync(indexFile, "utf8").replace("%TRACE_BASE_PATH%", escapeAttribute(traceBasePath));
  const files = new Map<string, UiAsset>();
  const assetsDir = path.join(dir, "assets");
  for (const name of fs.existsSync(assetsDir) ? fs.readdirSync(assetsDir) : []) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (!contentType) continue;
    const file = path.join(assetsDir, name);
    const gzipFile = `${file}.gz`;
    files.set(`/assets/${name}`, { body: fs.readFileSync(file), gzip: fs.existsSync(gzipFile) ? fs.readFileSync(gzipFile) : undefined, contentType });
  }
  return { indexHtml, files };
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}
