import fs from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { KernelAddon, SimdChoice } from "./native/addon.js";
import { NativeKernels } from "./native/index.js";
import { backwardPrecisionFromEnv, forwardPrecisionFromEnv, threadsFromEnv } from "./settings.js";
import type { ProductPrecision, Kernels } from "./types.js";

/** Why the native kernels could not be used; the message is shown to the operator as is. */
export class NativeKernelsUnavailable extends Error {}

/** Where `npm ci` (native/build-addon.js) puts the addon; the same depth from src/ and dist/. */
export const ADDON_PATH = fileURLToPath(new URL("../../../native/build/Release/flywheel_kernels.node", import.meta.url));

let addon: KernelAddon | undefined;
let shared: NativeKernels | undefined;

/** The addon module itself (loaded once per thread), or NativeKernelsUnavailable saying why not. */
export function loadKernelAddon(): KernelAddon {
  if (addon) return addon;
  if (!fs.existsSync(ADDON_PATH)) throw new NativeKernelsUnavailable("the native kernel addon is not built (`npm run build:native` builds it and shows why it failed)");
  try {
    addon = createRequire(import.meta.url)(ADDON_PATH) as KernelAddon;
  } catch (error) {
    throw new NativeKernelsUnavailable(`the native kernel addon failed to load: ${(error as Error).message}`);
  }
  return addon;
}

export interface LoadNativeKernelsOptions {
  /** Pool threads, the caller included. Default FLYWHEEL_THREADS, else the machine's available parallelism. */
  threads?: number;
  simd?: SimdChoice;
  env?: Record<string, string | undefined>;
  /** Where the message goes when a bf16 precision setting cannot apply here (default: console.warn). */
  warn?: (message: string) => void;
}

/**
 * The native kernel backend (C++, SIMD, a thread pool), or NativeKernelsUnavailable when the addon
 * is not built or cannot load. Without options, one instance is shared per thread, so every model
 * a thread loads runs on the same pool.
 */
export function loadNativeKernels(options: LoadNativeKernelsOptions = {}): Kernels {
  const kernelAddon = loadKernelAddon();
  const defaults = options.threads === undefined && options.simd === undefined;
  if (defaults && shared) return shared;
  const threads = options.threads ?? threadsFromEnv(options.env);
  const kernels = new NativeKernels(kernelAddon, {
    threads,
    simd: options.simd,
    forwardPrecision: precisionHere("FLYWHEEL_FORWARD_PRECISION", forwardPrecisionFromEnv(options.env), kernelAddon, options),
    backwardPrecision: precisionHere("FLYWHEEL_BACKWARD_PRECISION", backwardPrecisionFromEnv(options.env), kernelAddon, options),
  });
  if (defaults) shared = kernels;
  return kernels;
}

const bf16FallbacksReported = new Set<string>();

/**
 * A precision setting (`setting`, asking for `wanted`) where this CPU can run it: bf16 products
 * need AVX-512 BF16 (and the avx512 level), so elsewhere the products stay f32, said once per
 * process and setting.
 */
function precisionHere(setting: string, wanted: ProductPrecision, kernelAddon: KernelAddon, options: LoadNativeKernelsOptions): ProductPrecision {
  const level = options.simd ?? "auto";
  if (wanted === "f32" || (kernelAddon.bf16Products && (level === "auto" || level === "avx512"))) return wanted;
  if (!bf16FallbacksReported.has(setting)) {
    bf16FallbacksReported.add(setting);
    const why = kernelAddon.bf16Products ? `the kernels run at the ${level} level` : "this CPU has no AVX-512 BF16";
    (options.warn ?? console.warn)(`flywheel: ${setting}=bf16 is ignored because ${why}; its products stay f32`);
  }
  return "f32";
}
