import { describe, expect, it } from "vitest";
import { trajectoryGroupLogMetrics } from "./log-metrics.js";
import { rlStepMetrics, sftStepMetrics } from "./step-metrics.js";
import type { TrajectoryGroupJson } from "./trajectory.js";

const traj = (reward: number, metrics: Record<string, unknown> = {}) => ({ reward, metrics, messages_and_choices: [] });

describe("trajectoryGroupLogMetrics", () => {
  it("computes reward, exception rate, reward std dev and averaged trajectory metrics", () => {
    const groups: TrajectoryGroupJson[] = [
      { trajectories: [traj(1, { correct: true, turns: 3 }), traj(0, { correct: false, turns: 5 }), traj(0.5, { correct: true, turns: 4 })], exceptions: [{ type: "E", message: "m", traceback: "" }] },
      { trajectories: [traj(2, { turns: 1, note: "text is not a metric" })] },
      { trajectories: [traj(0.2), traj(0.4)] },
    ];
    const metrics = trajectoryGroupLogMetrics(groups);
    // numpy: mean of the six rewards; 1 exception of 7; mean of std([1, 0, .5]) and std([.2, .4]).
    expect(metrics.reward).toBeCloseTo(0.6833333333333335, 12);
    expect(metrics.exception_rate).toBeCloseTo(1 / 7, 12);
    expect(metrics.reward_std_dev).toBeCloseTo(0.2541241452319315, 12);
    // Booleans count as 0/1; a metric is averaged over the trajectories that report it.
    expect(metrics.correct).toBeCloseTo(2 / 3, 12);
    expect(metrics.turns).toBe(3.25);
    expect(metrics).not.toHaveProperty("note");
  });

  it("computes the metrics of the reference example by hand", () => {
    // Group 1 rewards 1, 3 → population std 1; group 2 rewards 0, 0, 6 → mean 2, std sqrt((4+4+16)/3) = sqrt(8);
    // group 3 has one trajectory (no std). Rewards overall: 1+3+0+0+6+5 = 15 over 6 → 2.5. Exceptions 2 of 8.
    // A trajectory metric named like a computed one ("reward") is not averaged in.
    const metrics = trajectoryGroupLogMetrics([
      { trajectories: [traj(1, { turns: 2, solved: true }), traj(3, { turns: 4, solved: false })], exceptions: [{}] },
      { trajectories: [traj(0), traj(0, { turns: 9 }), traj(6)], exceptions: [] },
      { trajectories: [traj(5, { reward: 100 })], exceptions: [{}] },
    ]);
    expect(metrics).toEqual({ reward: 2.5, exception_rate: 0.25, reward_std_dev: (1 + Math.sqrt(8)) / 2, turns: 5, solved: 0.5 });
  });

  it("leaves out what has nothing to average", () => {
    expect(trajectoryGroupLogMetrics([])).toEqual({});
    expect(trajectoryGroupLogMetrics([{ trajectories: [], exceptions: [{}] }])).toEqual({ exception_rate: 1 });
    expect(trajectoryGroupLogMetrics([{ trajectories: [traj(3)] }])).toEqual({ reward: 3, exception_rate: 0 });
    expect(trajectoryGroupLogMetrics([{ trajectories: [traj(1, { x: Number.NaN }), traj(2, { x: 4 })] }]).x).toBe(4);
  });
});

describe("gradient_step data", () => {
  it("is flat numbers for an RL step, with entropy and KL only when measured", () => {
    expect(rlStepMetrics({ loss: 0.5, entropy: 1.2, gradNorm: 0.3, learningRate: 5e-6, klPolicyRef: 0.01, probsCorr: 0.9, numTrainableTokens: 100, samplerLogprobMaxDiff: 0, seconds: 2 })).toEqual({
      loss: 0.5,
      entropy: 1.2,
      grad_norm: 0.3,
      learning_rate: 5e-6,
      kl_policy_ref: 0.01,
      probs_corr: 0.9,
      num_trainable_tokens: 100,
      sampler_logprob_max_diff: 0,
      tokens_per_second: 50,
    });
    const bare = rlStepMetrics({ loss: 0, entropy: null, gradNorm: 0, learningRate: 1, klPolicyRef: null, probsCorr: 0, numTrainableTokens: 3, samplerLogprobMaxDiff: null, seconds: 0 });
    expect(bare).not.toHaveProperty("entropy");
    expect(bare).not.toHaveProperty("sampler_logprob_max_diff");
    expect(bare).not.toHaveProperty("kl_policy_ref");
    expect(bare.tokens_per_second).toBe(0);
  });

  it("has the SFT keys", () => {
    expect(sftStepMetrics({ loss: 1.5, learningRate: 2e-4, gradNorm: 0.7, numTrajectories: 2, numTokens: 40, numTrainableTokens: 12, seconds: 0.5 })).toEqual({
      loss: 1.5,
      learning_rate: 2e-4,
      grad_norm: 0.7,
      num_trajectories: 2,
      num_tokens: 40,
      num_trainable_tokens: 12,
      tokens_per_second: 24,
    });
  });
});
