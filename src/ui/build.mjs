#!/usr/bin/env node
// Builds the web UI into dist/ui: one JS and one CSS bundle with content-hashed names (served with
// long caching), a gzipped copy of each, and index.html pointing at them. Runs offline from the
// sources in this folder and node_modules; `npm run build` and `npm ci` (prepare) run it.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import zlib from "node:zlib";
import * as esbuild from "esbuild";

const uiDir = path.dirname(fileURLToPath(import.meta.url));
/** `--out DIR` builds elsewhere (the browser tests build into a temporary folder). */
const outFlag = process.argv.indexOf("--out");
const outDir = outFlag > 0 && process.argv[outFlag + 1] ? path.resolve(process.argv[outFlag + 1]) : path.resolve(uiDir, "../../dist/ui");
/** The budget for the whole UI over the wire. */
const MAX_GZIPPED_BYTES = 150 * 1024;

fs.rmSync(outDir, { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: [path.join(uiDir, "main.tsx")],
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020", "chrome100", "firefox100", "safari15"],
  jsx: "automatic",
  jsxImportSource: "preact",
  entryNames: "assets/[name]-[hash]",
  assetNames: "assets/[name]-[hash]",
  outdir: outDir,
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
  define: { "process.env.NODE_ENV": '"production"' },
});

const outputs = Object.keys(result.metafile.outputs).map((file) => path.relative(outDir, path.resolve(file)));
const script = outputs.find((file) => file.endsWith(".js"));
const style = outputs.find((file) => file.endsWith(".css"));
if (!script || !style) throw new Error(`UI build produced no ${script ? "CSS" : "JS"} bundle`);

// The icon too gets a content hash, so every file the page loads is cached for good.
const iconBody = fs.readFileSync(path.join(uiDir, "favicon.svg"));
const icon = `assets/favicon-${crypto.createHash("sha256").update(iconBody).digest("hex").slice(0, 8).toUpperCase()}.svg`;
fs.writeFileSync(path.join(outDir, icon), iconBody);
outputs.push(icon);

const template = fs.readFileSync(path.join(uiDir, "index.html"), "utf8");
const html = template.replace("{{script}}", `/${script}`).replace("{{style}}", `/${style}`).replace("{{icon}}", `/${icon}`);
fs.writeFileSync(path.join(outDir, "index.html"), html);

let gzipped = 0;
const files = {};
for (const file of [...outputs, "index.html"]) {
  const body = fs.readFileSync(path.join(outDir, file));
  const gz = zlib.gzipSync(body, { level: 9 });
  fs.writeFileSync(path.join(outDir, `${file}.gz`), gz);
  gzipped += gz.length;
  files[file] = { bytes: body.length, gzipBytes: gz.length, sha256: crypto.createHash("sha256").update(body).digest("hex") };
}
fs.writeFileSync(path.join(outDir, "manifest.json"), JSON.stringify({ script, style, files, gzipBytes: gzipped }, null, 2));
console.log(`UI built: ${script}, ${style} — ${(gzipped / 1024).toFixed(1)} KB gzipped in all`);
if (gzipped > MAX_GZIPPED_BYTES) {
  console.error(`The UI is ${(gzipped / 1024).toFixed(1)} KB gzipped, over the ${MAX_GZIPPED_BYTES / 1024} KB budget`);
  process.exit(1);
}
