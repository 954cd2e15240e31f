import { z } from "zod";
import type { ImportanceSamplingLevel } from "./importance-ratios.js";
import type { RlLossOptions } from "./rl-loss.js";

/**
 * `experimental_config` of an RL job (`spec/training.md` §5.1, `spec/interface.md` §2.4): the
 * request schema (every field optional and nullable, unknown keys ignored, cross-field rules) and
 * its resolution into a typed config with every default applied. The job routes validate with
 * `ExperimentalConfigSchema` (422 on failure) and the trainer reads `resolveRlTrainConfig`.
 */
export const ExperimentalConfigSchema = z
  .object({
    learning_rate: z.number().min(0).nullish().describe("AdamW learning rate of every step (default 5e-6)"),
    loss_fn: z.enum(["cispo", "ppo"]).nullish().describe("Objective (default cispo; ppo when `ppo` is true)"),
    ppo: z.boolean().nullish().describe("PPO clipped objective instead of CISPO"),
    epsilon: z.number().min(0).nullish().describe("Lower clip 1 − epsilon (default 0.2 for PPO, 1.0 for CISPO)"),
    epsilon_high: z.number().min(0).nullish().describe("Upper clip 1 + epsilon_high (default epsilon for PPO, 4.0 for CISPO)"),
    importance_sampling_level: z.enum(["token", "sequence", "average", "geometric_average"]).nullish(),
    scale_rewards: z.boolean().nullish().describe("Divide group-centred rewards by the group's std (default true)"),
    normalize_advantages: z.boolean().nullish().describe("false turns scale_rewards off"),
    advantage_balance: z.number().min(-1).max(1).nullish(),
    allow_training_without_logprobs: z.boolean().nullish(),
    mask_prob_ratio: z.boolean().nullish(),
    max_negative_advantage_importance_sampling_weight: z.number().min(0).nullish(),
    kimi_k2_tau: z.number().nullish(),
    vendor_k2_tau: z.number().nullish().describe("Synonym of kimi_k2_tau"),
    truncated_importance_sampling: z.number().min(0).nullish(),
    precalculate_logprobs: z.boolean().nullish(),
    kl_penalty_coef: z.number().min(0).nullish(),
    kl_penalty_source: z.enum(["current_learner", "sample"]).nullish(),
    kl_ref_adapter_path: z.string().nullish().describe("Not supported (a client file path); use kl_penalty_reference_step"),
    kl_penalty_reference_step: z.int().min(0).nullish(),
    kl_penalty_step_lag: z.int().min(1).nullish(),
    num_trajectories_learning_rate_multiplier_power: z.number().nullish(),
    scale_learning_rate_by_reward_std_dev: z.boolean().nullish(),
    packed_sequence_length: z.int().min(1).nullish(),
    logprob_calculation_chunk_size: z.int().min(1).nullish(),
    plot_tensors: z.boolean().nullish(),
  })
  .superRefine((config, context) => {
    if (config.kl_ref_adapter_path !== null && config.kl_ref_adapter_path !== undefined) {
      context.addIssue({ code: "custom", path: ["kl_ref_adapter_path"], message: "kl_ref_adapter_path names a file on the client and is not supported; use kl_penalty_reference_step or kl_penalty_step_lag" });
    }
    if (isSet(config.kl_penalty_reference_step) && isSet(config.kl_penalty_step_lag)) {
      context.addIssue({ code: "custom", path: ["kl_penalty_step_lag"], message: "set kl_penalty_reference_step or kl_penalty_step_lag, not both" });
    }
    if (isSet(config.loss_fn) && isSet(config.ppo) && (config.loss_fn === "ppo") !== config.ppo) {
      context.addIssue({ code: "custom", path: ["loss_fn"], message: `loss_fn '${config.loss_fn}' contradicts ppo=${String(config.ppo)}` });
    }
    if (isSet(config.kimi_k2_tau) && isSet(config.vendor_k2_tau) && config.kimi_k2_tau !== config.vendor_k2_tau) {
      context.addIssue({ code: "custom", path: ["vendor_k2_tau"], message: "vendor_k2_tau is a synonym of kimi_k2_tau and must not differ from it" });
    }
    const chunk = config.logprob_calculation_chunk_size ?? DEFAULT_CHUNK_SIZE;
    if (isSet(config.packed_sequence_length) && config.packed_sequence_length % chunk !== 0) {
      context.addIssue({ code: "custom", path: ["packed_sequence_length"], message: `packed_sequence_length (${config.packed_sequence_length}) must be a multiple of logprob_calculation_chunk_size (${chunk})` });
    }
  });

export type ExperimentalConfigReq = z.input<typeof ExperimentalConfigSchema>;

const DEFAULT_CHUNK_SIZE = 1024;

function isSet<T>(value: T | null | undefined): value is T {
  return value !== null && value !== undefined;
}

/** Where the KL reference logprobs come from: the base weights, an absolute step, or the current step minus a lag. */
export type KlReference = { kind: "base" } | { kind: "step"; step: number } | { kind: "lag"; lag: number };

export interface RlTrainConfig {
  learningRate: number;
  objective: "cispo" | "ppo";
  epsilon: number;
  epsilonHigh: number;
  importanceSamplingLevel: ImportanceSamplingLevel;
  scaleRewards: boolean;
  advantageBalance: number;
  allowTrainingWithoutLogprobs: boolean;
  maskProbRatio: boolean;
  maxImportanceSamplingWeight: number | null;
  kimiK2Tau: number | null;
  truncatedImportanceSampling: number | null;
  precalculateLogprobs: boolean;
  klPenaltyCoef: number;
  klPenaltySource: "current_learner" | "sample";
  klReference: KlReference;
  numTrajectoriesLearningRateMultiplierPower: number;
  scaleLearningRateByRewardStdDev: boolean;
  /** null: `autoPackedSequenceLength`. */
  packedSequenceLength: number | null;
  logprobCalculationChunkSize: number;
  plotTensors: boolean;
}

export const DEFAULT_RL_LEARNING_RATE = 5e-6;

/** Defaults for null or absent fields (§5.1). Validate with `ExperimentalConfigSchema` first. */
export function resolveRlTrainConfig(raw: ExperimentalConfigReq | null | undefined): RlTrainConfig {
  const config = ExperimentalConfigSchema.parse(raw ?? {});
  const ppo = config.loss_fn === "ppo" || (!isSet(config.loss_fn) && config.ppo === true);
  const epsilon = config.epsilon ?? (ppo ? 0.2 : 1.0);
  return {
    learningRate: config.learning_rate ?? DEFAULT_RL_LEARNING_RATE,
    objective: ppo ? "ppo" : "cispo",
    epsilon,
    epsilonHigh: config.epsilon_high ?? (ppo ? epsilon : 4.0),
    importanceSamplingLevel: config.importance_sampling_level ?? "token",
    scaleRewards: (config.scale_rewards ?? true) && (config.normalize_advantages ?? true),
    advantageBalance: config.advantage_balance ?? 0,
    allowTrainingWithoutLogprobs: config.allow_training_without_logprobs ?? false,
    maskProbRatio: config.mask_prob_ratio ?? false,
    maxImportanceSamplingWeight: config.max_negative_advantage_importance_sampling_weight || null,
    kimiK2Tau: (config.kimi_k2_tau ?? config.vendor_k2_tau) || null,
    truncatedImportanceSampling: config.truncated_importance_sampling || null,
    precalculateLogprobs: config.precalculate_logprobs ?? false,
    klPenaltyCoef: config.kl_penalty_coef ?? 0,
    klPenaltySource: config.kl_penalty_source ?? "current_learner",
    klReference: isSet(config.kl_penalty_reference_step)
      ? { kind: "step", step: config.kl_penalty_reference_step }
      : isSet(config.kl_penalty_step_lag)
        ? { kind: "lag", lag: config.kl_penalty_step_lag }
        : { kind: "base" },
    numTrajectoriesLearningRateMultiplierPower: config.num_trajectories_learning_rate_multiplier_power ?? 0,
    scaleLearningRateByRewardStdDev: config.scale_learning_rate_by_reward_std_dev ?? false,
    packedSequenceLength: config.packed_sequence_length ?? null,
    logprobCalculationChunkSize: config.logprob_calculation_chunk_size ?? DEFAULT_CHUNK_SIZE,
    plotTensors: config.plot_tensors ?? false,
  };
}

/** The checkpoint step whose weights give the KL reference logprobs; null means the base weights. */
export function klReferenceStep(reference: KlReference, currentStep: number): number | null {
  switch (reference.kind) {
    case "base":
      return null;
    case "step":
      return reference.step;
    case "lag":
      return Math.max(0, currentStep - reference.lag);
  }
}

export function rlLossOptions(config: RlTrainConfig): RlLossOptions {
  return {
    objective: config.objective,
    epsilon: config.epsilon,
    epsilonHigh: config.epsilonHigh,
    importanceSamplingLevel: config.importanceSamplingLevel,
    maxImportanceSamplingWeight: config.maxImportanceSamplingWeight,
    maskProbRatio: config.maskProbRatio,
    kimiK2Tau: config.kimiK2Tau,
    klPenaltyCoef: config.klPenaltyCoef,
    klPenaltySource: config.klPenaltySource,
    truncatedImportanceSampling: config.truncatedImportanceSampling,
  };
}
