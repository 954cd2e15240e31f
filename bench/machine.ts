import os from "node:os";
import { describeCpu } from "../src/engine/kernels/cpu-model.js";

/** The machine a benchmark ran on, for its report: CPU count, the CPU (`describeCpu`) and the load average. */
export function describeMachine(): string {
  const load = os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
  return `${os.cpus().length} CPUs (${describeCpu()}), load average ${load}`;
}
