import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { projectRoot } from "../config.js";
import type { CliResult } from "./cli.js";
import { startServer } from "./cli.js";
import { tinyModel } from "./models.js";
import { makeTempDir } from "./stores.js";

/** The id the examples' tests serve the fixture model under (FLYWHEEL_EXAMPLE_MODEL). */
export const EXAMPLE_MODEL = "fixture/tiny-qwen2";

export interface ExampleServer {
  url: string;
  key: string;
  /** Runs `examples/<file>` against this server and resolves when it exits. */
  runExample(file: string, env?: Record<string, string>): Promise<CliResult>;
  stop(): Promise<void>;
}

/**
 * A real `flywheel serve` process (SQLite in a fresh data directory, in-process job worker) that
 * serves the small qwen2 fixture model as EXAMPLE_MODEL, for running the examples as users do.
 */
export async function startExampleServer(env: Record<string, string> = {}): Promise<ExampleServer> {
  const dataDir = makeTempDir("flywheel-examples-");
  fs.cpSync(tinyModel("qwen2").dir, path.join(dataDir, "models", ...EXAMPLE_MODEL.split("/")), { recursive: true });
  const key = "example-test-key-0123456789";
  const server = await startServer(["--data-dir", dataDir], { FLYWHEEL_API_KEY: key, FLYWHEEL_LOG_LEVEL: "warn", FLYWHEEL_JOB_POLL_MS: "100", ...env });
  return {
    url: server.url,
    key,
    runExample: (file, extra = {}) => runExample(file, { FLYWHEEL_BASE_URL: server.url, FLYWHEEL_API_KEY: key, FLYWHEEL_EXAMPLE_MODEL: EXAMPLE_MODEL, ...extra }),
    async stop() {
      server.child.kill("SIGTERM");
      await server.exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `npx tsx examples/<file>` with exactly these settings (none inherited from the test's environment). */
export function runExample(file: string, env: Record<string, string | undefined>): Promise<CliResult> {
  const inherited = { ...process.env };
  for (const name of Object.keys(inherited)) {
    if (name.startsWith("FLYWHEEL_") || name.startsWith("RL_") || name.startsWith("SFT_") || name === "WANDB_API_KEY" || name === "WF_TRACE_SERVER_URL") delete inherited[name];
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(projectRoot, "examples", file)], { env: { ...inherited, ...env }, cwd: projectRoot });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
