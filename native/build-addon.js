#!/usr/bin/env node
// Builds the native kernel addon with node-gyp; `npm ci` runs this as the package's install script.
// A failed build must not fail the install: Flywheel then runs on its TypeScript kernels, so this
// prints one clear line, keeps the compiler output in native/build.log and exits 0. CI sets
// FLYWHEEL_REQUIRE_NATIVE=1, which turns a failed build into a failed install.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const nativeDir = path.dirname(fileURLToPath(import.meta.url));
const logFile = path.join(nativeDir, "build.log");
const addonFile = path.join(nativeDir, "build", "Release", "flywheel_kernels.node");
const required = process.env.FLYWHEEL_REQUIRE_NATIVE === "1";

/** The node-gyp that npm bundles: on PATH inside npm scripts, else beside this Node's npm. */
function nodeGypCommand() {
  const probe = spawnSync("node-gyp", ["--version"], { encoding: "utf8", shell: process.platform === "win32" });
  if (probe.status === 0) return { command: "node-gyp", prefix: [] };
  const prefix = path.dirname(path.dirname(process.execPath));
  for (const lib of [path.join(prefix, "lib"), prefix]) {
    const script = path.join(lib, "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js");
    if (fs.existsSync(script)) return { command: process.execPath, prefix: [script] };
  }
  return undefined;
}

/**
 * Headers of the running Node, so node-gyp never downloads them: an explicit nodedir wins, else the
 * installation's own include/node (Node's release tarballs and distribution packages ship it).
 */
function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [];
  const prefix = path.dirname(path.dirname(process.execPath));
  return fs.existsSync(path.join(prefix, "include", "node", "node_api.h")) ? [`--nodedir=${prefix}`] : [];
}

function finish(ok, detail) {
  if (ok) {
    console.log(`flywheel: built the native kernel addon (${detail})`);
    process.exit(0);
  }
  const outcome = required ? "FLYWHEEL_REQUIRE_NATIVE=1, so the install fails" : "Flywheel will use its slower TypeScript kernels";
  console.log(`flywheel: the native kernel addon did not build (${detail}); ${outcome}. Details: ${path.relative(process.cwd(), logFile) || logFile}`);
  process.exit(required ? 1 : 0);
}

const gyp = nodeGypCommand();
if (!gyp) finish(false, "node-gyp was not found");
const args = [...gyp.prefix, "rebuild", `--directory=${nativeDir}`, `--jobs=${os.availableParallelism()}`, ...nodedirArgs()];
const result = spawnSync(gyp.command, args, { encoding: "utf8", shell: process.platform === "win32", maxBuffer: 64 * 1024 * 1024 });
fs.writeFileSync(logFile, `${gyp.command} ${args.join(" ")}\n${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? String(result.error) : ""}`);
if (result.status !== 0 || !fs.existsSync(addonFile)) {
  const errorLine = `${result.stderr ?? ""}${result.stdout ?? ""}`.split("\n").find((line) => /error/i.test(line) && !/^gyp (ERR|info)/.test(line));
  finish(false, (errorLine ?? result.error?.message ?? `node-gyp exited with status ${result.status}`).trim().slice(0, 200));
}
try {
  const addon = createRequire(import.meta.url)(addonFile);
  finish(true, `${addon.bestSimd}`);
} catch (error) {
  finish(false, `it does not load: ${error.message}`);
}
