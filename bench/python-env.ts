/**
 * The Python environment of the training benchmark (bench/train-vs-pytorch.ts) and of the
 * reference-value scripts (scripts/reference/): a virtual environment of their own in
 * bench/.cache/py (git-ignored; FLYWHEEL_PYTHON_ENV moves it), made on first use with
 * `python3 -m venv` and the pinned bench/requirements.txt, reinstalled when that file changes.
 * pip runs with its own configuration, so PIP_INDEX_URL and friends (or a pip.conf) choose where
 * packages come from. `npm ci` and `npm start` never need any of it.
 *
 *   npx tsx bench/python-env.ts                      # make the environment, print its interpreter
 *   npx tsx bench/python-env.ts SCRIPT.py [ARGS...]  # make it, then run a script with it
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const REQUIREMENTS = path.join(import.meta.dirname, "requirements.txt");
const DEFAULT_DIR = path.join(import.meta.dirname, ".cache", "py");

/** The environment's interpreter, creating or updating the environment first when needed. */
export function ensurePythonEnv(dir: string = process.env.FLYWHEEL_PYTHON_ENV || DEFAULT_DIR, log: (line: string) => void = console.error): string {
  const python = path.join(dir, "bin", "python");
  const stampFile = path.join(dir, ".requirements-sha256");
  const wanted = createHash("sha256").update(fs.readFileSync(REQUIREMENTS)).digest("hex");
  if (fs.existsSync(python) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8").trim() === wanted) return python;
  if (!fs.existsSync(python)) {
    log(`creating the Python environment ${dir} (python3 -m venv)`);
    run("python3", ["-m", "venv", dir]);
  }
  log("installing bench/requirements.txt into it (pip's own configuration chooses the package index)");
  run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", REQUIREMENTS]);
  fs.writeFileSync(stampFile, `${wanted}\n`);
  return python;
}

function run(command: string, args: string[]): void {
  try {
    execFileSync(command, args, { stdio: ["ignore", "inherit", "inherit"] });
  } catch (error) {
    throw new Error(`\`${command} ${args.join(" ")}\` failed (${(error as Error).message.split("\n")[0]})`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const python = ensurePythonEnv();
  const [script, ...args] = process.argv.slice(2);
  if (!script) {
    console.log(python);
  } else {
    const result = spawnSync(python, [script, ...args], { stdio: "inherit" });
    process.exitCode = result.status ?? 1;
  }
}
