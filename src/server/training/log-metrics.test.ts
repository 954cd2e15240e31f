import { describe, expect, it } from "vitest";
import { computeLogMetrics } from "./log-metrics.js";

const traj = (reward: number, metrics: Record<string, number | boolean> = {}) => ({ reward, metrics }) as never;

describe("computeLogMetrics", () => {
  it("computes reward, exception_rate, reward_std_dev and averaged trajectory metrics", () => {
    // Group 1 rewards 1, 3 → population std 1; group 2 rewards 0, 0, 6 → mean 2, std sqrt((4+4+16)/3) = sqrt(8);
    // group 3 has one trajectory (no std). Rewards overall: 1+3+0+0+6+5 = 15 over 6 → 2.5. Exceptions 2 of 8.
    const metrics = computeLogMetrics([
      { trajectories: [traj(1, { turns: 2, solved: true }), traj(3, { turns: 4, solved: false })], exceptions: [{}] },
      { trajectories: [traj(0), traj(0, { turns: 9 }), traj(6)], exceptions: [] },
      { trajectories: [traj(5, { reward: 100 })], exceptions: [{}] },
    ] as never);
    expect(metrics).toEqual({
      reward: 2.5,
      exception_rate: 0.25,
      reward_std_dev: (1 + Math.sqrt(8)) / 2,
      turns: 5,
      solved: 0.5,
    });
  });

  it("leaves out what has nothing to average", () => {
    expect(computeLogMetrics([])).toEqual({});
    expect(computeLogMetrics([{ trajectories: [], exceptions: [{}] }] as never)).toEqual({ exception_rate: 1 });
    expect(computeLogMetrics([{ trajectories: [traj(2)], exceptions: [] }] as never)).toEqual({ reward: 2, exception_rate: 0 });
  });
});
