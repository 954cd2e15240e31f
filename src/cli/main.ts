#!/usr/bin/env node
import { ConfigError } from "../config.js";
import { artifactsCommand, artifactsUsage } from "./artifacts.js";
import { UsageError } from "./args.js";
import { checkpointsCommand, checkpointsUsage } from "./checkpoints.js";
import { keysCommand, keysUsage } from "./keys.js";
import { modelsCommand, modelsUsage } from "./models.js";
import { serveCommand, serveUsage } from "./serve.js";
import { workerCommand, workerUsage } from "./worker.js";

const commands: Record<string, { run: (args: string[]) => Promise<void>; usage: string }> = {
  serve: { run: serveCommand, usage: serveUsage },
  worker: { run: workerCommand, usage: workerUsage },
  keys: { run: keysCommand, usage: keysUsage },
  models: { run: modelsCommand, usage: modelsUsage },
  artifacts: { run: artifactsCommand, usage: artifactsUsage },
  checkpoints: { run: checkpointsCommand, usage: checkpointsUsage },
};

function usage(): string {
  return ["usage: flywheel <command> [options]", "", ...Object.values(commands).map((command) => command.usage), ""].join("\n\n");
}

async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    console.log(usage());
    return;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command '${name}'\n\n${usage()}`);
  // `flywheel models make-tiny --help` and the like: the command's usage, before any option is parsed.
  if (args.includes("--help") || args.includes("-h")) {
    console.log(command.usage);
    return;
  }
  await command.run(args);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError) {
    console.error(`flywheel: ${error.message}`);
    process.exit(2);
  }
  console.error(`flywheel: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
