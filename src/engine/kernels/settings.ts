import os from "node:os";
import type { ProductPrecision } from "./types.js";

/**
 * The engine's settings that come from the environment (docs/configuration.md), read here and
 * nowhere else in the engine. They belong to a process, not to a server: every engine thread,
 * trainer thread and `flywheel worker` process reads them when it first loads a model, and the
 * engine sits below `src/config.ts` (which it does not import), so they are read at this layer.
 */

export type KernelsChoice = "auto" | "ts" | "native";

type Env = Record<string, string | undefined>;

/** FLYWHEEL_KERNELS: which kernel backend runs models (unset: auto). */
export function kernelsChoiceFromEnv(env: Env = process.env): KernelsChoice {
  return parseKernelsChoice(env.FLYWHEEL_KERNELS);
}

export function parseKernelsChoice(value: string | undefined): KernelsChoice {
  if (value === undefined || value === "" || value === "auto") return "auto";
  if (value === "ts" || value === "native") return value;
  throw new Error(`FLYWHEEL_KERNELS must be "ts" or "native" (or unset), got ${JSON.stringify(value)}`);
}

/** FLYWHEEL_FORWARD_PRECISION: what the forward's weight products multiply in (unset: f32). */
export function forwardPrecisionFromEnv(env: Env = process.env): ProductPrecision {
  return parsePrecision("FLYWHEEL_FORWARD_PRECISION", env.FLYWHEEL_FORWARD_PRECISION);
}

/** FLYWHEEL_BACKWARD_PRECISION: what the backward's matrix products multiply in (unset: f32). */
export function backwardPrecisionFromEnv(env: Env = process.env): ProductPrecision {
  return parsePrecision("FLYWHEEL_BACKWARD_PRECISION", env.FLYWHEEL_BACKWARD_PRECISION);
}

function parsePrecision(name: string, value: string | undefined): ProductPrecision {
  if (value === undefined || value === "" || value === "f32") return "f32";
  if (value === "bf16") return value;
  throw new Error(`${name} must be "f32" or "bf16" (or unset), got ${JSON.stringify(value)}`);
}

/** FLYWHEEL_THREADS (a positive integer) or the number of CPUs this process may use. */
export function threadsFromEnv(env: Env = process.env): number {
  const value = env.FLYWHEEL_THREADS;
  if (value === undefined || value === "") return os.availableParallelism();
  if (!/^[1-9]\d{0,3}$/.test(value)) throw new Error(`FLYWHEEL_THREADS must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}
