import { loadNativeKernels, NativeKernelsUnavailable } from "./native-loader.js";
import { TsKernels } from "./ts/index.js";
import type { Kernels } from "./types.js";

export type KernelsChoice = "auto" | "ts" | "native";

export interface SelectKernelsOptions {
  /** Read for FLYWHEEL_KERNELS (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Where the one fallback message goes (default: console.warn). */
  warn?: (message: string) => void;
  /** Loads the native backend (default: loadNativeKernels); tests substitute a failing one. */
  loadNative?: () => Kernels;
}

let fallbackReported = false;

/**
 * The kernel backend to run models on: the native addon when it loads, else the TypeScript
 * reference (saying so once per process). FLYWHEEL_KERNELS=ts|native overrides the choice;
 * `native` when the addon cannot load is an error rather than a silent fallback.
 */
export function selectKernels(options: SelectKernelsOptions = {}): Kernels {
  const choice = parseKernelsChoice((options.env ?? process.env).FLYWHEEL_KERNELS);
  if (choice === "ts") return new TsKernels();
  try {
    return (options.loadNative ?? loadNativeKernels)();
  } catch (error) {
    const reason = error instanceof NativeKernelsUnavailable ? error.message : `it failed to load: ${(error as Error).message}`;
    if (choice === "native") throw new Error(`FLYWHEEL_KERNELS=native, but the native kernels are unavailable: ${reason}`);
    if (!fallbackReported) {
      fallbackReported = true;
      (options.warn ?? console.warn)(`flywheel: using the TypeScript reference kernels (slower) because ${reason}; set FLYWHEEL_KERNELS=ts to choose them explicitly`);
    }
    return new TsKernels();
  }
}

export function parseKernelsChoice(value: string | undefined): KernelsChoice {
  if (value === undefined || value === "" || value === "auto") return "auto";
  if (value === "ts" || value === "native") return value;
  throw new Error(`FLYWHEEL_KERNELS must be "ts" or "native" (or unset), got ${JSON.stringify(value)}`);
}
