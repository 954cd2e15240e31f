import { describe, expect, it } from "vitest";
import { AdamW, clipGradNorm, OPTIMIZER_SETTINGS } from "./adamw.js";
import { NonFiniteTrainingError } from "./errors.js";

const grads = [
  [0.1, -0.2, 0.05],
  [0.3, 0.1, -0.4],
  [-0.2, 0.0, 0.1],
];

function run(optimizer: AdamW, start: number[]): Float32Array {
  const params = [Float32Array.from(start)];
  for (const grad of grads) optimizer.step(params, [Float32Array.from(grad)], 0.01);
  return params[0]!;
}

describe("AdamW", () => {
  it.each([
    // scripts/reference/train_math.py: torch.optim.AdamW's update written out in numpy (three steps, lr 0.01).
    ["rl", [0.47679283943755063, -0.9822923771374775, 1.9939354932216022]],
    ["sft", [0.47826218868857756, -0.9852667211443551, 1.9999160441753854]],
  ] as const)("matches PyTorch's AdamW with the %s settings", (mode, expected) => {
    const optimizer = new AdamW([3], { settings: OPTIMIZER_SETTINGS[mode] });
    const params = run(optimizer, [0.5, -1.0, 2.0]);
    expected.forEach((value, i) => expect(params[i]).toBeCloseTo(value, 6));
    expect(optimizer.stepCount).toBe(3);
  });

  it("uses betas (0.9, 0.99) and decays weights 0.1 for RL and 0 for SFT", () => {
    expect(OPTIMIZER_SETTINGS.rl).toMatchObject({ beta1: 0.9, beta2: 0.99, weightDecay: 0.1, maxGradNorm: 0.1 });
    expect(OPTIMIZER_SETTINGS.sft).toMatchObject({ beta1: 0.9, beta2: 0.99, weightDecay: 0, maxGradNorm: 1 });
  });

  it("resets its moments when a job switches between SFT and RL, and keeps them otherwise", () => {
    const optimizer = new AdamW([3]);
    optimizer.beginJob("rl");
    run(optimizer, [0.5, -1.0, 2.0]);
    optimizer.beginJob("rl");
    expect(optimizer.stepCount).toBe(3);
    expect(optimizer.settings.weightDecay).toBe(0.1);
    optimizer.beginJob("sft");
    expect(optimizer.stepCount).toBe(0);
    expect(optimizer.settings.weightDecay).toBe(0);
    expect([...optimizer.exportState().expAvg[0]!]).toEqual([0, 0, 0]);
    // After a reset the next steps are those of a fresh optimizer.
    const params = run(optimizer, [0.5, -1.0, 2.0]);
    expect(params[0]).toBeCloseTo(0.47826218868857756, 6);
  });

  it("continues exactly from an exported state", () => {
    const first = new AdamW([3], { settings: OPTIMIZER_SETTINGS.rl });
    const params = [Float32Array.from([0.5, -1.0, 2.0])];
    first.step(params, [Float32Array.from(grads[0]!)], 0.01);
    const resumed = new AdamW([3], { state: first.exportState() });
    for (const grad of grads.slice(1)) resumed.step(params, [Float32Array.from(grad)], 0.01);
    expect(params[0]![2]).toBeCloseTo(1.9939354932216022, 6);
    expect(() => new AdamW([4], { state: first.exportState() })).toThrow(/shapes/);
  });

  it("rejects tensors that do not match its shapes", () => {
    const optimizer = new AdamW([3]);
    expect(() => optimizer.step([new Float32Array(2)], [new Float32Array(2)], 0.1)).toThrow(RangeError);
    expect(() => optimizer.step([], [], 0.1)).toThrow(RangeError);
  });
});

describe("AdamW (non-finite updates)", () => {
  it("refuses an update that leaves the float32 range, and a non-finite rate", () => {
    const optimizer = new AdamW([2], { settings: OPTIMIZER_SETTINGS.sft });
    const params = [Float32Array.from([0.5, -0.5])];
    expect(() => optimizer.step(params, [Float32Array.from([1, 1])], 1e39)).toThrow(NonFiniteTrainingError);
    expect(() => optimizer.step(params, [Float32Array.from([1, 1])], Number.POSITIVE_INFINITY)).toThrow(/learning rate is not finite/);
  });
});

describe("clipGradNorm", () => {
  it("scales every gradient by max / (norm + 1e-6) when the global norm is larger, and returns the norm before", () => {
    const split = [Float32Array.from([0.3, -0.4]), Float32Array.from([1.2])];
    expect(clipGradNorm(split, 0.1)).toBeCloseTo(1.3, 6);
    // scripts/reference/train_math.py: g · min(1, 0.1 / (1.3 + 1e-6)).
    [0.023076905325457444, -0.030769207100609926].forEach((value, i) => expect(split[0]![i]).toBeCloseTo(value, 7));
    expect(split[1]![0]).toBeCloseTo(0.09230762130182978, 7);
  });

  it("leaves small gradients alone and refuses a non-finite norm", () => {
    const small = [Float32Array.from([0.03, 0.04])];
    expect(clipGradNorm(small, 1.0)).toBeCloseTo(0.05, 7);
    expect([...small[0]!]).toEqual([Math.fround(0.03), Math.fround(0.04)]);
    expect(() => clipGradNorm([Float32Array.from([NaN])], 1)).toThrow(/not finite/);
  });
});
