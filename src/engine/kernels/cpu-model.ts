import fs from "node:fs";
import os from "node:os";

/**
 * The CPU's model name, with the x86 family and model numbers where /proc/cpuinfo gives them:
 * virtual machines often name every AMD EPYC alike, while its generations differ in vector
 * throughput (Zen 4 runs a 512-bit FMA at half the rate of Zen 5), and so in every speed we report.
 */
export function describeCpu(cpuinfo: string | null = readCpuinfo(), modelName = os.cpus()[0]?.model.trim() || "unknown CPU"): string {
  const family = cpuinfo && /^cpu family\s*:\s*(\d+)/m.exec(cpuinfo)?.[1];
  const model = cpuinfo && /^model\s*:\s*(\d+)/m.exec(cpuinfo)?.[1];
  return family && model ? `${modelName}, x86 family ${family} model ${model}` : modelName;
}

function readCpuinfo(): string | null {
  try {
    return fs.readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    // Not Linux: the model name is all there is.
    return null;
  }
}
