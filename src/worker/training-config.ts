/**
 * The resolved training configurations a job carries (spec/training.md §5.1 and §7). The HTTP
 * schemas in server/training validate requests and call the resolvers here, so the defaults live
 * in exactly one place.
 */

export type LossFn = "cispo" | "ppo";
export type ImportanceSamplingLevel = "token" | "sequence" | "average" | "geometric_average";
export type KlPenaltySource = "current_learner" | "sample";

/** Every §5.1 knob with its default applied; the trainer reads only this. */
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
  /** null = automatic (spec §5.3). */
  packed_sequence_length: number | null;
  logprob_calculation_chunk_size: number;
  plot_tensors: boolean;
}

/** What a request may leave out or send as null (the wire names, including both spellings of two flags). */
export type RlConfigInput = { [K in keyof RlTrainingConfig]?: RlTrainingConfig[K] | null } & {
  ppo?: boolean | null;
  normalize_advantages?: boolean | null;
};

/** The §5.1 defaults of the knobs whose default does not depend on another knob. */
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
  logprob_calculation_chunk_size: 1024,
  plot_tensors: false,
} as const satisfies Partial<RlTrainingConfig>;

/** ε defaults: 0.2 for PPO, 1.0 for CISPO; ε_high: ε for PPO, 4.0 for CISPO (§5.1). */
export const EPSILON_DEFAULTS = { ppo: { epsilon: 0.2, epsilonHigh: undefined }, cispo: { epsilon: 1.0, epsilonHigh: 4.0 } } as const;

/** Applies the defaults; null and absent mean the same. Consistency rules are checked by the caller. */
export function resolveRlConfig(input: RlConfigInput): RlTrainingConfig {
  const pick = <K extends keyof typeof RL_CONFIG_DEFAULTS>(key: K): RlTrainingConfig[K] => (input[key] ?? RL_CONFIG_DEFAULTS[key]) as RlTrainingConfig[K];
  const lossFn: LossFn = input.loss_fn ?? (input.ppo === true ? "ppo" : RL_CONFIG_DEFAULTS.loss_fn);
  const epsilon = input.epsilon ?? EPSILON_DEFAULTS[lossFn].epsilon;
  const epsilonHigh = input.epsilon_high ?? EPSILON_DEFAULTS[lossFn].epsilonHigh ?? epsilon;
  return {
    learning_rate: pick("learning_rate"),
    loss_fn: lossFn,
    epsilon,
    epsilon_high: epsilonHigh,
    importance_sampling_level: pick("importance_sampling_level"),
    // ART sends normalize_advantages as the effective scale_rewards; either one false turns scaling off.
    scale_rewards: (input.scale_rewards ?? true) && (input.normalize_advantages ?? true),
    advantage_balance: pick("advantage_balance"),
    allow_training_without_logprobs: pick("allow_training_without_logprobs"),
    mask_prob_ratio: pick("mask_prob_ratio"),
    max_negative_advantage_importance_sampling_weight: pick("max_negative_advantage_importance_sampling_weight"),
    kimi_k2_tau: pick("kimi_k2_tau"),
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
 * undefined when there is no KL penalty; null for the base weights (no reference step named).
 */
export function klReferenceStep(config: Pick<RlTrainingConfig, "kl_penalty_coef" | "kl_penalty_reference_step" | "kl_penalty_step_lag">, baseStep: number): number | null | undefined {
  if (!(config.kl_penalty_coef > 0)) return undefined;
  if (config.kl_penalty_reference_step !== null) return config.kl_penalty_reference_step;
  if (config.kl_penalty_step_lag !== null) return Math.max(0, baseStep - config.kl_penalty_step_lag);
  return null;
}

export type AssistantTurns = "all" | "last";

/** SFT settings with "auto" and the learning-rate form resolved: one rate per batch. */
export interface SftTrainingConfig {
  batch_size: number;
  /** One learning rate per batch, in batch order. */
  learning_rates: number[];
  assistant_turns: AssistantTurns;
  metric_logging: { enabled: boolean; target_training_step: number | null } | null;
  /** The request's free-form experimental_config, passed through. */
  experimental_config: Record<string, unknown>;
}

export const SFT_CONFIG_DEFAULTS = {
  /** "auto" resolves to 2 (spec §7). */
  auto_batch_size: 2,
  learning_rate: 5e-5,
  assistant_turns: "all",
} as const;

export function sftBatchCount(rowCount: number, batchSize: number): number {
  return Math.ceil(rowCount / batchSize);
}
