import fs from "node:fs";
import os from "node:os";

/**
 * The machine a benchmark ran on, for its report: CPU count and model, the x86 family and model
 * numbers where /proc/cpuinfo gives them (virtual machines often name every AMD EPYC alike, while
 * its generations differ in vector throughput: Zen 4 runs a 512-bit FMA at half the rate of Zen 5),
 * and the load average.
 */
export function describeMachine(): string {
  const cpus = os.cpus();
  let generation = "";
  try {
    const info = fs.readFileSync("/proc/cpuinfo", "utf8");
    const family = /^cpu family\s*:\s*(\d+)/m.exec(info)?.[1];
    const model = /^model\s*:\s*(\d+)/m.exec(info)?.[1];
    if (family && model) generation = `, x86 family ${family} model ${model}`;
  } catch {
    // Not Linux: the model name is all there is.
  }
  const load = os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
  return `${cpus.length} CPUs (${cpus[0]?.model.trim() ?? "unknown CPU"}${generation}), load average ${load}`;
}
