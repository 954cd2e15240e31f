import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The interpreter of the project's Python test environment (transformers, PEFT, gguf), built on
 * first use by `scripts/python/env.mjs`, the one way to get it. Building takes minutes, so call it
 * from a `beforeAll` with a long timeout. A missing environment fails the test: CI builds it.
 */
export function testPython(): string {
  const run = spawnSync(process.execPath, [path.join(root, "scripts", "python", "env.mjs")], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 });
  const lines = run.stdout.trim().split("\n");
  if (run.status !== 0 || !lines.at(-1)) {
    const problem =
      run.error?.message ??
      run.stderr
        .split("\n")
        .filter((line) => !line.startsWith("WARNING: Location"))
        .slice(-20)
        .join("\n");
    throw new Error(`the Python test environment could not be built (node scripts/python/env.mjs): ${problem}`);
  }
  return lines.at(-1)!;
}

/** Runs a Python file of the test environment with one JSON argument and parses its JSON stdout. */
export function runTestPython<T>(python: string, script: string, input: unknown): T {
  const run = spawnSync(python, [script, JSON.stringify(input)], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`${path.basename(script)} failed (${run.status}): ${run.stderr.slice(-4000)}`);
  return JSON.parse(run.stdout) as T;
}
