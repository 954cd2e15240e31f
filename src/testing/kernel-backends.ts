import { NativeKernels } from "../engine/kernels/native/index.js";
import { loadNativeKernels } from "../engine/kernels/native-loader.js";
import { TsKernels } from "../engine/kernels/ts/index.js";
import type { Kernels } from "../engine/kernels/types.js";
import { nativeAddonForTests } from "./native.js";

/** "native-bf16": the native kernels with bf16 products forward and backward (AVX-512 BF16 only). */
export type KernelBackend = "ts" | "native" | "native-bf16";

let warned = false;
let bf16Kernels: NativeKernels | undefined;

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

/** ["native-bf16"] where this CPU runs the bf16 products, else none (they are an opt-in setting, not a build). */
export function bf16TestKernelBackends(): KernelBackend[] {
  const found = nativeAddonForTests();
  return "addon" in found && found.addon.bf16Products ? ["native-bf16"] : [];
}

/** A backend's kernels: a fresh TS instance, or this thread's shared native one (of each precision). */
export function kernelsForTests(backend: KernelBackend): Kernels {
  if (backend === "ts") return new TsKernels();
  const found = nativeAddonForTests();
  if (!("addon" in found)) throw new Error(`FLYWHEEL_REQUIRE_NATIVE=1, but ${found.reason}`);
  if (backend === "native") return loadNativeKernels();
  bf16Kernels ??= new NativeKernels(found.addon, { threads: 2, forwardPrecision: "bf16", backwardPrecision: "bf16" });
  return bf16Kernels;
}
