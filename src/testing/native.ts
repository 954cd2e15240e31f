import { describe, it } from "vitest";
import type { KernelAddon } from "../engine/kernels/native/addon.js";
import { loadKernelAddon, NativeKernelsUnavailable } from "../engine/kernels/native-loader.js";

/**
 * The native addon for tests, or why it is missing. Where it must exist (CI sets
 * FLYWHEEL_REQUIRE_NATIVE=1, since CI machines have a compiler), a missing addon fails the tests
 * instead of skipping them.
 */
export function nativeAddonForTests(): { addon: KernelAddon } | { reason: string } {
  try {
    return { addon: loadKernelAddon() };
  } catch (error) {
    if (!(error instanceof NativeKernelsUnavailable)) throw error;
    return { reason: error.message };
  }
}

/**
 * `describe` for tests of the native kernels: skipped, loudly and with the reason, when the addon is
 * not built; a failing test instead when FLYWHEEL_REQUIRE_NATIVE=1.
 */
export function describeNative(name: string, body: (addon: KernelAddon) => void): void {
  const found = nativeAddonForTests();
  if ("addon" in found) {
    describe(name, () => body(found.addon));
    return;
  }
  if (process.env.FLYWHEEL_REQUIRE_NATIVE === "1") {
    describe(name, () => {
      it("needs the native kernel addon (FLYWHEEL_REQUIRE_NATIVE=1)", () => {
        throw new Error(`FLYWHEEL_REQUIRE_NATIVE=1, but ${found.reason}`);
      });
    });
    return;
  }
  console.warn(`SKIPPING ${name}: ${found.reason}`);
  describe.skip(`${name} (skipped: ${found.reason})`, () => {
    it("needs the native kernel addon", () => {});
  });
}
