import { loadNativeKernels } from "../engine/kernels/native-loader.js";
import { TsKernels } from "../engine/kernels/ts/index.js";
import type { Kernels } from "../engine/kernels/types.js";
import { nativeAddonForTests } from "./native.js";

export type KernelBackend = "ts" | "native";

let warned = false;

/**
 * The kernel backends that tests of whole models run on: the TypeScript reference always, and the
 * native addon when it is built, so batch invariance and trainer/sampler parity are checked on
 * what CI runs. Under FLYWHEEL_REQUIRE_NATIVE=1 "native" is always listed and its tests fail
 * when the addon is missing (`kernelsForTests` throws); otherwise it is left out, once with a warning.
 */
export function testKernelBackends(): KernelBackend[] {
  const found = nativeAddonForTests();
  if ("addon" in found || process.env.FLYWHEEL_REQUIRE_NATIVE === "1") return ["ts", "native"];
  if (!warned) console.warn(`SKIPPING native-kernel runs of model tests: ${found.reason}`);
  warned = true;
  return ["ts"];
}

/** A backend's kernels: a fresh TS instance, or this thread's shared native one. */
export function kernelsForTests(backend: KernelBackend): Kernels {
  if (backend === "ts") return new TsKernels();
  const found = nativeAddonForTests();
  if (!("addon" in found)) throw new Error(`FLYWHEEL_REQUIRE_NATIVE=1, but ${found.reason}`);
  return loadNativeKernels();
}
