import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { projectRoot } from "../config.js";

const entry = path.join(projectRoot, "src", "cli", "main.ts");
/** tsx's ESM loader by URL, since `--import tsx` would resolve the name from the child's working directory. */
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** Environment for a child CLI: the parent's, minus settings that would leak into the test. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ["DATABASE_URL", "FLYWHEEL_API_KEY", "FLYWHEEL_PORT", "FLYWHEEL_HOST", "FLYWHEEL_DATA_DIR", "FLYWHEEL_MODELS", "FLYWHEEL_BASE_URL", "WANDB_API_KEY"]) delete base[name];
  return { ...base, ...env };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `flywheel <args>` from source to completion (in the project root unless `cwd` says otherwise). */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, cwd = projectRoot): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", tsxLoader, entry, ...args], { env: childEnv(env), cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  stdout(): string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  exited: Promise<number | string | null>;
}

/** Starts `flywheel serve` on a free port and resolves once it listens. */
export function startServer(args: string[], env: Record<string, string | undefined> = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, ["--import", "tsx", entry, "serve", "--port", "0", ...args], { env: childEnv({ FLYWHEEL_LOG_LEVEL: "info", ...env }), cwd: projectRoot });
  let stdout = "";
  let stderr = "";
  const exited = new Promise<number | string | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stdout}\n${stderr}`)), 30_000);
    child.stderr?.on("data", (chunk) => (stderr += chunk));
    child.stdout?.on("data", (chunk) => {
      stdout += chunk;
      const match = /^Flywheel (http:\/\/\S+)/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1]!, child, stdout: () => stdout, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${String(code)}) before listening:\n${stdout}\n${stderr}`));
    });
  });
}
