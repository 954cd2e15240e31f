import { describe, expect, it } from "vitest";
import { ExperimentalConfigSchema, klReferenceStep, RL_CONFIG_DEFAULTS, resolveRlConfig, rlLossOptions } from "./config.js";

// What ART's serverless client sends with its defaults: every key, unset ones as null.
const ART_DEFAULTS = {
  advantage_balance: 0.0,
  allow_training_without_logprobs: false,
  epsilon: null,
  epsilon_high: null,
  importance_sampling_level: "token",
  kimi_k2_tau: null,
  kl_penalty_coef: 0.0,
  kl_penalty_reference_step: null,
  kl_penalty_source: "current_learner",
  kl_penalty_step_lag: null,
  kl_ref_adapter_path: null,
  learning_rate: 5e-6,
  logprob_calculation_chunk_size: 1024,
  loss_fn: "cispo",
  mask_prob_ratio: false,
  max_negative_advantage_importance_sampling_weight: null,
  normalize_advantages: true,
  num_trajectories_learning_rate_multiplier_power: 0.0,
  packed_sequence_length: null,
  plot_tensors: false,
  ppo: false,
  precalculate_logprobs: false,
  scale_learning_rate_by_reward_std_dev: false,
  scale_rewards: true,
  truncated_importance_sampling: null,
} as const;

describe("resolveRlConfig", () => {
  it("gives the docs/api/training.md#rl-config defaults for an absent config, all nulls and ART's defaults alike", () => {
    const expected = { ...RL_CONFIG_DEFAULTS, epsilon: 1.0, epsilon_high: 4.0 };
    expect(expected).toEqual({
      learning_rate: 5e-6,
      loss_fn: "cispo",
      epsilon: 1.0,
      epsilon_high: 4.0,
      importance_sampling_level: "token",
      scale_rewards: true,
      advantage_balance: 0,
      allow_training_without_logprobs: false,
      mask_prob_ratio: false,
      max_negative_advantage_importance_sampling_weight: null,
      kimi_k2_tau: null,
      truncated_importance_sampling: null,
      precalculate_logprobs: false,
      kl_penalty_coef: 0,
      kl_penalty_source: "current_learner",
      kl_penalty_reference_step: null,
      kl_penalty_step_lag: null,
      num_trajectories_learning_rate_multiplier_power: 0,
      scale_learning_rate_by_reward_std_dev: false,
      packed_sequence_length: null,
      logprob_calculation_chunk_size: 1024,
      plot_tensors: false,
    });
    expect(resolveRlConfig(undefined)).toEqual(expected);
    expect(resolveRlConfig(null)).toEqual(expected);
    expect(resolveRlConfig(Object.fromEntries(Object.keys(ART_DEFAULTS).map((key) => [key, null])))).toEqual(expected);
    expect(resolveRlConfig(ExperimentalConfigSchema.parse(ART_DEFAULTS))).toEqual(expected);
  });

  it("ignores unknown keys (older and newer clients)", () => {
    const parsed = ExperimentalConfigSchema.parse({ learning_rate: 1e-4, some_future_knob: 3 });
    expect(resolveRlConfig(parsed)).not.toHaveProperty("some_future_knob");
    expect(resolveRlConfig(parsed).learning_rate).toBe(1e-4);
  });

  it("defaults the clip range by objective", () => {
    expect(resolveRlConfig({ ppo: true })).toMatchObject({ loss_fn: "ppo", epsilon: 0.2, epsilon_high: 0.2 });
    expect(resolveRlConfig({ loss_fn: "ppo", ppo: true, epsilon: 0.1 })).toMatchObject({ epsilon: 0.1, epsilon_high: 0.1 });
    expect(resolveRlConfig({ loss_fn: "ppo", epsilon_high: 0.3 })).toMatchObject({ loss_fn: "ppo", epsilon: 0.2, epsilon_high: 0.3 });
    expect(resolveRlConfig({ epsilon: 0.5 })).toMatchObject({ loss_fn: "cispo", epsilon: 0.5, epsilon_high: 4.0 });
  });

  it("maps the remaining knobs", () => {
    const config = resolveRlConfig({
      normalize_advantages: false,
      advantage_balance: -0.5,
      max_negative_advantage_importance_sampling_weight: 2,
      vendor_k2_tau: 0.1,
      kl_penalty_coef: 0.05,
      kl_penalty_source: "sample",
      kl_penalty_step_lag: 3,
      num_trajectories_learning_rate_multiplier_power: 0.5,
      packed_sequence_length: 4096,
    });
    expect(config).toMatchObject({
      scale_rewards: false,
      advantage_balance: -0.5,
      max_negative_advantage_importance_sampling_weight: 2,
      kimi_k2_tau: 0.1,
      truncated_importance_sampling: null,
      kl_penalty_coef: 0.05,
      kl_penalty_source: "sample",
      kl_penalty_step_lag: 3,
      num_trajectories_learning_rate_multiplier_power: 0.5,
      packed_sequence_length: 4096,
    });
    expect(rlLossOptions(config)).toEqual({
      objective: "cispo",
      epsilon: 1,
      epsilonHigh: 4,
      importanceSamplingLevel: "token",
      maxImportanceSamplingWeight: 2,
      maskProbRatio: false,
      kimiK2Tau: 0.1,
      klPenaltyCoef: 0.05,
      klPenaltySource: "sample",
      truncatedImportanceSampling: null,
    });
  });
});

describe("klReferenceStep", () => {
  it("is none without a KL penalty, else the base weights, a fixed step, or the step trained from minus the lag (not below 0)", () => {
    const kl = (coef: number, reference: number | null, lag: number | null) => ({ kl_penalty_coef: coef, kl_penalty_reference_step: reference, kl_penalty_step_lag: lag });
    expect(klReferenceStep(kl(0, 3, null), 10)).toBeUndefined();
    expect(klReferenceStep(kl(0.1, null, null), 10)).toBeNull();
    expect(klReferenceStep(kl(0.1, 3, null), 10)).toBe(3);
    expect(klReferenceStep(kl(0.1, null, 4), 10)).toBe(6);
    expect(klReferenceStep(kl(0.1, null, 4), 2)).toBe(0);
  });
});

describe("ExperimentalConfigSchema as a request schema", () => {
  const issues = (value: unknown) => {
    const result = ExperimentalConfigSchema.safeParse(value);
    return result.success ? [] : result.error.issues.map((issue) => [issue.path.join("."), issue.code]);
  };

  it("accepts ART's request", () => {
    expect(issues(ART_DEFAULTS)).toEqual([]);
  });

  it("names each invalid field", () => {
    expect(issues({ importance_sampling_level: "tokens" })).toEqual([["importance_sampling_level", "invalid_value"]]);
    expect(issues({ advantage_balance: 2 })).toEqual([["advantage_balance", "too_big"]]);
    expect(issues({ kl_penalty_step_lag: 0 })).toEqual([["kl_penalty_step_lag", "too_small"]]);
    expect(issues({ kl_penalty_reference_step: 1.5 })).toEqual([["kl_penalty_reference_step", "invalid_type"]]);
    expect(issues({ learning_rate: "fast" })).toEqual([["learning_rate", "invalid_type"]]);
    expect(issues({ learning_rate: 0 })).toEqual([["learning_rate", "too_small"]]);
    expect(issues({ truncated_importance_sampling: 0 })).toEqual([["truncated_importance_sampling", "too_small"]]);
  });

  it("rejects a client-side adapter path, contradictory or doubled settings, and a row length off the chunk grid", () => {
    expect(issues({ kl_ref_adapter_path: "checkpoints/ref-adapter" })).toEqual([["kl_ref_adapter_path", "custom"]]);
    expect(issues({ kl_penalty_reference_step: 1, kl_penalty_step_lag: 2 })).toEqual([["kl_penalty_step_lag", "custom"]]);
    expect(issues({ loss_fn: "cispo", ppo: true })).toEqual([["loss_fn", "custom"]]);
    expect(issues({ kimi_k2_tau: 0.1, vendor_k2_tau: 0.2 })).toEqual([["vendor_k2_tau", "custom"]]);
    expect(issues({ packed_sequence_length: 1000 })).toEqual([["packed_sequence_length", "custom"]]);
    expect(issues({ packed_sequence_length: 1000, logprob_calculation_chunk_size: 500 })).toEqual([]);
  });
});
