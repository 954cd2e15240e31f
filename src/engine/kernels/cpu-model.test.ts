import { describe, expect, it } from "vitest";
import { describeCpu } from "./cpu-model.js";

describe("describeCpu", () => {
  it("adds the x86 family and model that tell one EPYC generation from another", () => {
    const cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n";
    expect(describeCpu(cpuinfo, "AMD EPYC")).toBe("AMD EPYC, x86 family 25 model 17");
  });

  it("is the model name alone where there is no /proc/cpuinfo or it has no family", () => {
    expect(describeCpu(null, "Apple M2")).toBe("Apple M2");
    expect(describeCpu("processor\t: 0\nmodel name\t: Neoverse\n", "Neoverse")).toBe("Neoverse");
  });
});
