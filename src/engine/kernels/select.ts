import { loadNativeKernels, NativeKernelsUnavailable } from "./native-loader.js";
import { TsKernels } from "./ts/index.js";
import { backwardPrecisionFromEnv, forwardPrecisionFromEnv, type KernelsChoice, kernelsChoiceFromEnv } from "./settings.js";
import type { Kernels } from "./types.js";

export interface SelectKernelsOptions {
  /** The backend to use (default: FLYWHEEL_KERNELS, read from `env`). */
  choice?: KernelsChoice;
  /** Read for FLYWHEEL_KERNELS when `choice` is unset (default: the process environment). */
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
  const choice = options.choice ?? kernelsChoiceFromEnv(options.env);
  const reference = () => new TsKernels({ forwardPrecision: forwardPrecisionFromEnv(options.env), backwardPrecision: backwardPrecisionFromEnv(options.env) });
  if (choice === "ts") return reference();
  try {
    return (options.loadNative ?? loadNativeKernels)();
  } catch (error) {
    const reason = error instanceof NativeKernelsUnavailable ? error.message : `it failed to load: ${(error as Error).message}`;
    if (choice === "native") throw new Error(`FLYWHEEL_KERNELS=native, but the native kernels are unavailable: ${reason}`);
    if (!fallbackReported) {
      fallbackReported = true;
      (options.warn ?? console.warn)(`flywheel: using the TypeScript reference kernels (slower) because ${reason}; set FLYWHEEL_KERNELS=ts to choose them explicitly`);
    }
    return reference();
  }
}
