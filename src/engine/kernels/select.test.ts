import { describe, expect, it } from "vitest";
import { describeNative } from "../../testing/native.js";
import { loadNativeKernels, NativeKernelsUnavailable } from "./native-loader.js";
import { selectKernels } from "./select.js";
import { backwardPrecisionFromEnv, forwardPrecisionFromEnv, parseKernelsChoice, threadsFromEnv } from "./settings.js";

/** Each precision setting: its variable, its parser and the `Kernels` property it sets. */
const PRECISION_SETTINGS = [
  ["FLYWHEEL_FORWARD_PRECISION", forwardPrecisionFromEnv, "forwardPrecision"],
  ["FLYWHEEL_BACKWARD_PRECISION", backwardPrecisionFromEnv, "backwardPrecision"],
] as const;

const notBuilt = () => {
  throw new NativeKernelsUnavailable("the native kernel addon is not built");
};

describe("selectKernels", () => {
  it("uses the TS kernels when asked, silently", () => {
    const warnings: string[] = [];
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "ts" }, warn: (m) => warnings.push(m) }).name).toBe("ts");
    expect(warnings).toEqual([]);
  });

  it("falls back to the TS kernels with one message when the native addon is unavailable", () => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    expect(selectKernels({ env: {}, warn, loadNative: notBuilt }).name).toBe("ts");
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "auto" }, warn, loadNative: notBuilt }).name).toBe("ts");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/using the TypeScript reference kernels .* because the native kernel addon is not built; set FLYWHEEL_KERNELS=ts/);
  });

  it("refuses FLYWHEEL_KERNELS=native without the addon, and unknown values", () => {
    expect(() => selectKernels({ env: { FLYWHEEL_KERNELS: "native" }, loadNative: notBuilt })).toThrow(/FLYWHEEL_KERNELS=native, but the native kernels are unavailable: the native kernel addon is not built/);
    expect(() => parseKernelsChoice("gpu")).toThrow(/FLYWHEEL_KERNELS must be "ts" or "native" \(or unset\), got "gpu"/);
    expect(parseKernelsChoice(undefined)).toBe("auto");
    expect(parseKernelsChoice("")).toBe("auto");
  });

  it("sizes the native pool from FLYWHEEL_THREADS or the machine", () => {
    expect(threadsFromEnv({ FLYWHEEL_THREADS: "3" })).toBe(3);
    expect(threadsFromEnv({})).toBeGreaterThanOrEqual(1);
    expect(() => threadsFromEnv({ FLYWHEEL_THREADS: "0" })).toThrow(/FLYWHEEL_THREADS must be a positive integer, got "0"/);
    expect(() => threadsFromEnv({ FLYWHEEL_THREADS: "two" })).toThrow(/FLYWHEEL_THREADS/);
  });

  it.each(PRECISION_SETTINGS)("takes %s (f32 unless bf16 is asked for)", (name, fromEnv, property) => {
    expect(fromEnv({})).toBe("f32");
    expect(fromEnv({ [name]: "" })).toBe("f32");
    expect(fromEnv({ [name]: "f32" })).toBe("f32");
    expect(fromEnv({ [name]: "bf16" })).toBe("bf16");
    expect(() => fromEnv({ [name]: "fp16" })).toThrow(new RegExp(`${name} must be "f32" or "bf16" \\(or unset\\), got "fp16"`));
    const ts = selectKernels({ env: { FLYWHEEL_KERNELS: "ts", [name]: "bf16" } });
    expect([ts.forwardPrecision, ts.backwardPrecision]).toEqual(property === "forwardPrecision" ? ["bf16", "f32"] : ["f32", "bf16"]);
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "ts" } })[property]).toBe("f32");
  });
});

describeNative("selectKernels with the native addon built", () => {
  it("picks the native kernels by default and on request, silently", () => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const chosen = selectKernels({ env: {}, warn });
    expect(chosen.name).toBe("native");
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "native" }, warn })).toBe(chosen); // one shared instance per thread
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "ts" }, warn }).name).toBe("ts");
    expect(warnings).toEqual([]);
  });
});

describeNative("the native kernels under a bf16 precision setting", (addon) => {
  it.runIf(addon.bf16Products).each(PRECISION_SETTINGS)("%s=bf16 runs those products in bf16 where the CPU has AVX-512 BF16", (name, _, property) => {
    expect(loadNativeKernels({ threads: 1, env: { [name]: "bf16" }, warn: () => expect.unreachable() })[property]).toBe("bf16");
  });

  it.each(PRECISION_SETTINGS)("%s=bf16 stays f32, saying why once, where the kernels cannot run it", (name, _, property) => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const simd = addon.bf16Products ? "avx2" : undefined;
    const env = { [name]: "bf16" };
    expect(loadNativeKernels({ threads: 1, simd, env, warn })[property]).toBe("f32");
    expect(loadNativeKernels({ threads: 1, simd, env, warn })[property]).toBe("f32");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(addon.bf16Products ? new RegExp(`${name}=bf16 is ignored because the kernels run at the avx2 level`) : /this CPU has no AVX-512 BF16/);
  });
});
