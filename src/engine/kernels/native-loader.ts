import type { Kernels } from "./types.js";

/** Why the native kernels could not be used; the message is shown to the operator as is. */
export class NativeKernelsUnavailable extends Error {}

/**
 * Loads the native kernel addon (C++, SIMD, threads), built by node-gyp at install. That addon is
 * not part of this build yet, so this always reports it unavailable; the addon's loader replaces
 * this function and keeps its contract: return the kernels or throw NativeKernelsUnavailable.
 */
export function loadNativeKernels(): Kernels {
  throw new NativeKernelsUnavailable("the native kernel addon is not built");
}
