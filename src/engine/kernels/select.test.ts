import { describe, expect, it } from "vitest";
import { describeNative } from "../../testing/native.js";
import { loadNativeKernels, NativeKernelsUnavailable } from "./native-loader.js";
import { selectKernels } from "./select.js";
import { backwardPrecisionFromEnv, parseKernelsChoice, threadsFromEnv } from "./settings.js";

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

  it("takes the backward's precision from FLYWHEEL_BACKWARD_PRECISION (f32 unless bf16 is asked for)", () => {
    expect(backwardPrecisionFromEnv({})).toBe("f32");
    expect(backwardPrecisionFromEnv({ FLYWHEEL_BACKWARD_PRECISION: "" })).toBe("f32");
    expect(backwardPrecisionFromEnv({ FLYWHEEL_BACKWARD_PRECISION: "f32" })).toBe("f32");
    expect(backwardPrecisionFromEnv({ FLYWHEEL_BACKWARD_PRECISION: "bf16" })).toBe("bf16");
    expect(() => backwardPrecisionFromEnv({ FLYWHEEL_BACKWARD_PRECISION: "fp16" })).toThrow(/FLYWHEEL_BACKWARD_PRECISION must be "f32" or "bf16" \(or unset\), got "fp16"/);
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "ts", FLYWHEEL_BACKWARD_PRECISION: "bf16" } }).backwardPrecision).toBe("bf16");
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "ts" } }).backwardPrecision).toBe("f32");
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

describeNative("the native kernels under FLYWHEEL_BACKWARD_PRECISION=bf16", (addon) => {
  const env = { FLYWHEEL_BACKWARD_PRECISION: "bf16" };

  it.runIf(addon.bf16Products)("run the backward's products in bf16 where the CPU has AVX-512 BF16", () => {
    expect(loadNativeKernels({ threads: 1, env, warn: () => expect.unreachable() }).backwardPrecision).toBe("bf16");
  });

  it("stay f32, saying why once, where the kernels cannot run them", () => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const simd = addon.bf16Products ? "avx2" : undefined;
    expect(loadNativeKernels({ threads: 1, simd, env, warn }).backwardPrecision).toBe("f32");
    expect(loadNativeKernels({ threads: 1, simd, env, warn }).backwardPrecision).toBe("f32");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(addon.bf16Products ? /FLYWHEEL_BACKWARD_PRECISION=bf16 is ignored because the kernels run at the avx2 level/ : /this CPU has no AVX-512 BF16/);
  });
});
