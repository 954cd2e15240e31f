import { describe, expect, it } from "vitest";
import { parseKernelsChoice, selectKernels } from "./select.js";

describe("selectKernels", () => {
  it("uses the TS kernels when asked, silently", () => {
    const warnings: string[] = [];
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "ts" }, warn: (m) => warnings.push(m) }).name).toBe("ts");
    expect(warnings).toEqual([]);
  });

  it("falls back to the TS kernels with one message when the native addon is unavailable", () => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    expect(selectKernels({ env: {}, warn }).name).toBe("ts");
    expect(selectKernels({ env: { FLYWHEEL_KERNELS: "auto" }, warn }).name).toBe("ts");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/using the TypeScript reference kernels .* because the native kernel addon is not built; set FLYWHEEL_KERNELS=ts/);
  });

  it("refuses FLYWHEEL_KERNELS=native without the addon, and unknown values", () => {
    expect(() => selectKernels({ env: { FLYWHEEL_KERNELS: "native" } })).toThrow(/FLYWHEEL_KERNELS=native, but the native kernels are unavailable: the native kernel addon is not built/);
    expect(() => parseKernelsChoice("gpu")).toThrow(/FLYWHEEL_KERNELS must be "ts" or "native" \(or unset\), got "gpu"/);
    expect(parseKernelsChoice(undefined)).toBe("auto");
    expect(parseKernelsChoice("")).toBe("auto");
  });
});
