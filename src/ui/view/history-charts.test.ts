import { describe, expect, it } from "vitest";
import { historyCharts, latestReward } from "./history-charts.js";

describe("historyCharts", () => {
  const rows = [
    { step: 1, metrics: { "job/reward": 0.5, "job/reward_std_dev": 0.1, "grad/loss": 0.2, "grad/learning_rate": 1e-3, "val/reward": 0.3 } },
    { step: 0, metrics: { "train/reward": 0.1, "train/reward_std_dev": 0.05, "job/reward": 0.2, "grad/loss": 0.4, "grad/learning_rate": 1e-3, "train/exception_rate": 0.25 } },
    { step: 2, metrics: {} },
  ];

  it("puts every step on the x axis with gaps where a source has no value, and bands of ±std", () => {
    const [reward] = historyCharts(rows);
    expect(reward!.steps).toEqual([0, 1, 2]);
    expect(reward!.series.map((series) => series.label)).toEqual(["train (logged)", "val (logged)", "job rollouts"]);
    expect(reward!.series[0]).toEqual({ label: "train (logged)", values: [0.1, null, null], band: { lower: [0.05, null, null], upper: [0.15000000000000002, null, null] } });
    expect(reward!.series[1]).toEqual({ label: "val (logged)", values: [null, 0.3, null] });
    expect(reward!.series[2]!.values).toEqual([0.2, 0.5, null]);
    expect(reward!.series[2]!.band!.lower[0]).toBeNull();
    expect(reward!.series[2]!.band!.upper[1]).toBeCloseTo(0.6, 12);
  });

  it("adds gradient-step charts and the exception rate only when they have data", () => {
    const ids = historyCharts(rows).map((chart) => chart.id);
    expect(ids).toEqual(["reward", "loss", "learning-rate", "exception-rate"]);
    expect(historyCharts(rows).find((chart) => chart.id === "loss")!.series[0]!.values).toEqual([0.4, 0.2, null]);
  });

  it("always has a reward chart, empty for a model without history", () => {
    expect(historyCharts([])).toEqual([{ id: "reward", title: "Reward (mean ± std)", steps: [], series: [] }]);
  });
});

describe("latestReward", () => {
  it("prefers the newest logged train reward, else the newest job reward", () => {
    expect(
      latestReward([
        { step: 0, metrics: { "train/reward": 0.1 } },
        { step: 3, metrics: { "job/reward": 0.9 } },
      ]),
    ).toBe(0.1);
    expect(
      latestReward([
        { step: 0, metrics: { "job/reward": 0.1 } },
        { step: 3, metrics: { "job/reward": 0.9 } },
      ]),
    ).toBe(0.9);
    expect(latestReward([{ step: 0, metrics: {} }])).toBeUndefined();
  });
});
