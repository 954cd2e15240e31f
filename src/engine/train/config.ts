import { z } from "zod";
import type { ImportanceSamplingLevel } from "./importance-ratios.js";
import { TRAINING_RANGES as R } from "./ranges.js";
import type { RlLossOptions } from "./rl-loss.js";

/**
 * `experimental_config` of an RL job (`docs/api/training.md#rl-config`, `docs/api/training.md#rl-config`), in one
 * place: the request schema (every field optional and nullable, unknown keys ignored, cross-field
 * rules), the defaults table, and the resolved config with every default applied. The HTTP route
 * validates with `ExperimentalConfigSchema` and stores `resolveRlConfig`'s result with the job;
 * the trainer reads that stored form.
 */

export type LossFn = "cispo" | "ppo";
export type KlPenaltySource = "current_learner" | "sample";

const DEFAULT_CHUNK_SIZE = 1024;

export const ExperimentalConfigSchema = z
  .object({
    learning_rate: z.number().positive().max(R.learningRate.max).nullish().describe("AdamW learning rate of every step (default 5e-6)"),
    loss_fn: z.enum(["cispo", "ppo"]).nullish().describe("Objective (default cispo; ppo when `ppo` is true)"),
    ppo: z.boolean().nullish().describe("PPO clipped objective instead of CISPO"),
    epsilon: z.number().min(0).max(R.clipBound.max).nullish().describe("Lower clip 1 − epsilon (default 0.2 for PPO, 1.0 for CISPO)"),
    epsilon_high: z.number().min(0).max(R.clipBound.max).nullish().describe("Upper clip 1 + epsilon_high (default epsilon for PPO, 4.0 for CISPO)"),
    importance_sampling_level: z.enum(["token", "sequence", "average", "geometric_average"]).nullish(),
    scale_rewards: z.boolean().nullish().describe("Divide group-centred rewards by the group's std (default true)"),
    normalize_advantages: z.boolean().nullish().describe("false turns scale_rewards off"),
    advantage_balance: z.number().min(-1).max(1).nullish(),
    allow_training_without_logprobs: z.boolean().nullish(),
    mask_prob_ratio: z.boolean().nullish(),
    max_negative_advantage_importance_sampling_weight: z.number().positive().max(R.clipBound.max).nullish(),
    kimi_k2_tau: z.number().min(-R.coefficient.max).max(R.coefficient.max).nullish(),
    vendor_k2_tau: z.number().min(-R.coefficient.max).max(R.coefficient.max).nullish().describe("Synonym of kimi_k2_tau"),
    truncated_importance_sampling: z.number().positive().max(R.clipBound.max).nullish(),
    precalculate_logprobs: z.boolean().nullish(),
    kl_penalty_coef: z.number().min(0).max(R.coefficient.max).nullish(),
    kl_penalty_source: z.enum(["current_learner", "sample"]).nullish(),
    kl_ref_adapter_path: z.string().nullish().describe("Not supported (a client file path); use kl_penalty_reference_step"),
    kl_penalty_reference_step: z.int().min(0).nullish(),
    kl_penalty_step_lag: z.int().min(1).nullish(),
    num_trajectories_learning_rate_multiplier_power: z.number().min(R.numTrajectoriesPower.min).max(R.numTrajectoriesPower.max).nullish(),
    scale_learning_rate_by_reward_std_dev: z.boolean().nullish(),
    packed_sequence_length: z.int().min(1).max(R.sequenceTokens.max).nullish(),
    logprob_calculation_chunk_size: z.int().min(1).max(R.sequenceTokens.max).nullish(),
    plot_tensors: z.boolean().nullish(),
  })
  .superRefine((config, context) => {
    if (isSet(config.kl_ref_adapter_path)) {
      context.addIssue({
        code: "custom",
        path: ["kl_ref_adapter_path"],
        message: "kl_ref_adapter_path names a directory on the client's machine, which this server cannot read; use kl_penalty_reference_step or kl_penalty_step_lag",
      });
    }
    if (isSet(config.kl_penalty_reference_step) && isSet(config.kl_penalty_step_lag)) {
      context.addIssue({ code: "custom", path: ["kl_penalty_step_lag"], message: "kl_penalty_reference_step and kl_penalty_step_lag cannot both be set" });
    }
    if (isSet(config.loss_fn) && isSet(config.ppo) && (config.loss_fn === "ppo") !== config.ppo) {
      context.addIssue({ code: "custom", path: ["loss_fn"], message: `loss_fn '${config.loss_fn}' contradicts ppo=${String(config.ppo)}` });
    }
    if (isSet(config.kimi_k2_tau) && isSet(config.vendor_k2_tau) && config.kimi_k2_tau !== config.vendor_k2_tau) {
      context.addIssue({ code: "custom", path: ["vendor_k2_tau"], message: "kimi_k2_tau and vendor_k2_tau are the same setting and differ" });
    }
    const chunk = config.logprob_calculation_chunk_size ?? DEFAULT_CHUNK_SIZE;
    if (isSet(config.packed_sequence_length) && config.packed_sequence_length % chunk !== 0) {
      context.addIssue({
        code: "custom",
        path: ["packed_sequence_length"],
        message: `packed_sequence_length (${config.packed_sequence_length}) must be a multiple of logprob_calculation_chunk_size (${chunk})`,
      });
    }
  });

export type ExperimentalConfigReq = z.input<typeof ExperimentalConfigSchema>;

function isSet<T>(value: T | null | undefined): value is T {
  return value !== null && value !== undefined;
}

/** Every docs/api/training.md#rl-config knob with its default applied: what a job stores and the trainer reads. */
export interface RlTrainingConfig {
  learning_rate: number;
  loss_fn: LossFn;
  epsilon: number;
  epsilon_high: number;
  importance_sampling_level: ImportanceSamplingLevel;
  /** Divide group-centred rewards by the group std (`scale_rewards` and `normalize_advantages` both true). */
  scale_rewards: boolean;
  advantage_balance: number;
  allow_training_without_logprobs: boolean;
  mask_prob_ratio: boolean;
  max_negative_advantage_importance_sampling_weight: number | null;
  kimi_k2_tau: number | null;
  truncated_importance_sampling: number | null;
  precalculate_logprobs: boolean;
  kl_penalty_coef: number;
  kl_penalty_source: KlPenaltySource;
  kl_penalty_reference_step: number | null;
  kl_penalty_step_lag: number | null;
  num_trajectories_learning_rate_multiplier_power: number;
  scale_learning_rate_by_reward_std_dev: boolean;
  /** null = automatic (`autoPackedSequenceLength`, docs/api/training.md#packing). */
  packed_sequence_length: number | null;
  logprob_calculation_chunk_size: number;
  plot_tensors: boolean;
}

/** The docs/api/training.md#rl-config defaults of the knobs whose default does not depend on another knob. */
export const RL_CONFIG_DEFAULTS = {
  learning_rate: 5e-6,
  loss_fn: "cispo",
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
  logprob_calculation_chunk_size: DEFAULT_CHUNK_SIZE,
  plot_tensors: false,
} as const satisfies Partial<RlTrainingConfig>;

/** ε defaults: 0.2 for PPO, 1.0 for CISPO; ε_high: ε for PPO, 4.0 for CISPO (docs/api/training.md#rl-config). */
export const EPSILON_DEFAULTS = { ppo: { epsilon: 0.2, epsilonHigh: undefined }, cispo: { epsilon: 1.0, epsilonHigh: 4.0 } } as const;

/**
 * Applies the defaults to a config that passed `ExperimentalConfigSchema` (or any subset of its
 * fields); null and absent mean the same. The two spellings of two knobs are merged here:
 * `ppo` → `loss_fn`, `normalize_advantages` → `scale_rewards`, `vendor_k2_tau` → `kimi_k2_tau`.
 */
export function resolveRlConfig(input: ExperimentalConfigReq | null | undefined): RlTrainingConfig {
  const raw = input ?? {};
  const pick = <K extends keyof typeof RL_CONFIG_DEFAULTS>(key: K): RlTrainingConfig[K] => (raw[key] ?? RL_CONFIG_DEFAULTS[key]) as RlTrainingConfig[K];
  const lossFn: LossFn = raw.loss_fn ?? (raw.ppo === true ? "ppo" : RL_CONFIG_DEFAULTS.loss_fn);
  const epsilon = raw.epsilon ?? EPSILON_DEFAULTS[lossFn].epsilon;
  return {
    learning_rate: pick("learning_rate"),
    loss_fn: lossFn,
    epsilon,
    epsilon_high: raw.epsilon_high ?? EPSILON_DEFAULTS[lossFn].epsilonHigh ?? epsilon,
    importance_sampling_level: pick("importance_sampling_level"),
    // ART sends normalize_advantages as the effective scale_rewards; either one false turns scaling off.
    scale_rewards: (raw.scale_rewards ?? true) && (raw.normalize_advantages ?? true),
    advantage_balance: pick("advantage_balance"),
    allow_training_without_logprobs: pick("allow_training_without_logprobs"),
    mask_prob_ratio: pick("mask_prob_ratio"),
    max_negative_advantage_importance_sampling_weight: pick("max_negative_advantage_importance_sampling_weight"),
    kimi_k2_tau: raw.kimi_k2_tau ?? raw.vendor_k2_tau ?? null,
    truncated_importance_sampling: pick("truncated_importance_sampling"),
    precalculate_logprobs: pick("precalculate_logprobs"),
    kl_penalty_coef: pick("kl_penalty_coef"),
    kl_penalty_source: pick("kl_penalty_source"),
    kl_penalty_reference_step: pick("kl_penalty_reference_step"),
    kl_penalty_step_lag: pick("kl_penalty_step_lag"),
    num_trajectories_learning_rate_multiplier_power: pick("num_trajectories_learning_rate_multiplier_power"),
    scale_learning_rate_by_reward_std_dev: pick("scale_learning_rate_by_reward_std_dev"),
    packed_sequence_length: pick("packed_sequence_length"),
    logprob_calculation_chunk_size: pick("logprob_calculation_chunk_size"),
    plot_tensors: pick("plot_tensors"),
  };
}

/**
 * The checkpoint step a job's KL penalty compares against, given the step it trains from:
 * undefined when there is no KL penalty; null for the base weights (no reference step named);
 * `kl_penalty_step_lag` L gives max(0, base − L).
 */
export function klReferenceStep(config: Pick<RlTrainingConfig, "kl_penalty_coef" | "kl_penalty_reference_step" | "kl_penalty_step_lag">, baseStep: number): number | null | undefined {
  if (!(config.kl_penalty_coef > 0)) return undefined;
  if (config.kl_penalty_reference_step !== null) return config.kl_penalty_reference_step;
  if (config.kl_penalty_step_lag !== null) return Math.max(0, baseStep - config.kl_penalty_step_lag);
  return null;
}

export function rlLossOptions(config: RlTrainingConfig): RlLossOptions {
  return {
    objective: config.loss_fn,
    epsilon: config.epsilon,
    epsilonHigh: config.epsilon_high,
    importanceSamplingLevel: config.importance_sampling_level,
    maxImportanceSamplingWeight: config.max_negative_advantage_importance_sampling_weight,
    maskProbRatio: config.mask_prob_ratio,
    kimiK2Tau: config.kimi_k2_tau,
    klPenaltyCoef: config.kl_penalty_coef,
    klPenaltySource: config.kl_penalty_source,
    truncatedImportanceSampling: config.truncated_importance_sampling,
  };
}
