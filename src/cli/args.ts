import { parseArgs, type ParseArgsConfig } from "node:util";

/** Thrown for a command line that cannot run; the CLI prints the message and exits with 2. */
export class UsageError extends Error {}

export function parseCommandArgs<T extends NonNullable<ParseArgsConfig["options"]>>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
