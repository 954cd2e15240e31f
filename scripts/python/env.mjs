#!/usr/bin/env node
// Builds (once) the Python virtual environment the tests use to check Flywheel's exports with the
// real consumers (transformers, PEFT, gguf), and prints its interpreter's path as the last line.
//
//   node scripts/python/env.mjs                       # create or update .cache/python-env, print its python
//   node scripts/python/env.mjs SCRIPT.py [ARGS...]   # the same, then run a script with it
//
// The tests, the training benchmark (bench/train-vs-pytorch.ts) and the reference-value scripts
// (scripts/reference/) all use this one environment.
//
// The environment lives in the git-ignored .cache/python-env and is rebuilt only when
// requirements.txt changes (its hash is kept in the environment). Packages come from pip's own
// configuration (`pip config list`); when that names package indexes, they are passed as the
// only indexes so that pip never waits on an unreachable default index.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const requirementsFile = path.join(here, "requirements.txt");

/** Where the environment lives; FLYWHEEL_PYTHON_ENV moves it (e.g. to share one between checkouts). */
export function pythonEnvDir() {
  return process.env.FLYWHEEL_PYTHON_ENV ? path.resolve(process.env.FLYWHEEL_PYTHON_ENV) : path.join(root, ".cache", "python-env");
}

export function pythonEnvInterpreter(dir = pythonEnvDir()) {
  return path.join(dir, "bin", "python");
}

function requirementsHash() {
  return createHash("sha256").update(fs.readFileSync(requirementsFile)).digest("hex");
}

/** Whether the environment exists and was built from the current requirements. */
export function pythonEnvReady(dir = pythonEnvDir()) {
  const stamp = path.join(dir, "requirements.sha256");
  return fs.existsSync(pythonEnvInterpreter(dir)) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8").trim() === requirementsHash();
}

/** The index URLs pip is configured with (`index-url` first, then `extra-index-url`), in any scope. */
function configuredIndexes(python) {
  const run = spawnSync(python, ["-m", "pip", "config", "list"], { encoding: "utf8" });
  if (run.status !== 0) return [];
  const values = (key) =>
    run.stdout
      .split("\n")
      .filter((line) => new RegExp(`^[^=]*\\.${key}=`).test(line))
      .flatMap((line) =>
        line
          .slice(line.indexOf("=") + 1)
          .replace(/^'|'$/g, "")
          .split(/\s+/),
      )
      .filter(Boolean);
  return [...new Set([...values("index-url"), ...values("extra-index-url")])];
}

function run(command, args) {
  const result = spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"] });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed with exit status ${result.status}`);
}

/**
 * Creates or updates the environment; returns its interpreter's path. Test files run in parallel
 * may ask at once: one builds while holding a lock directory, the others wait for it.
 */
export function ensurePythonEnv(dir = pythonEnvDir()) {
  if (pythonEnvReady(dir)) return pythonEnvInterpreter(dir);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 30 * 60 * 1000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      if (pythonEnvReady(dir)) return pythonEnvInterpreter(dir);
      if (!lockHolderAlive(lock)) {
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`waited 30 minutes for another build of the Python environment (remove ${lock} if none is running)`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
    }
  }
  try {
    return buildPythonEnv(dir);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Whether the process that took the lock still runs (a crashed build leaves its lock behind). */
function lockHolderAlive(lock) {
  let pid;
  try {
    pid = Number(fs.readFileSync(path.join(lock, "pid"), "utf8"));
  } catch {
    return true; // just taken, pid not written yet
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

function buildPythonEnv(dir) {
  if (pythonEnvReady(dir)) return pythonEnvInterpreter(dir);
  const system = process.env.PYTHON ?? "python3";
  if (!fs.existsSync(pythonEnvInterpreter(dir))) {
    console.error(`Creating the Python environment in ${path.relative(root, dir) || dir}`);
    run(system, ["-m", "venv", dir]);
  }
  const python = pythonEnvInterpreter(dir);
  const indexes = configuredIndexes(python);
  const indexArgs = indexes.length > 0 ? ["--index-url", indexes[0], ...indexes.slice(1).flatMap((url) => ["--extra-index-url", url])] : [];
  run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", ...indexArgs, "-r", requirementsFile]);
  fs.writeFileSync(path.join(dir, "requirements.sha256"), `${requirementsHash()}\n`);
  return python;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let python;
  try {
    python = ensurePythonEnv();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  const [script, ...args] = process.argv.slice(2);
  if (!script) {
    console.log(python);
  } else {
    process.exitCode = spawnSync(python, [script, ...args], { stdio: "inherit" }).status ?? 1;
  }
}
