import { z } from "zod";
import { type RlConfigInput, resolveRlConfig, SFT_CONFIG_DEFAULTS } from "../../worker/training-config.js";

/**
 * `experimental_config` of RL jobs (spec/training.md §5.1) and `config` of SFT jobs (§7). Every
 * field is optional and nullable (null means the default); unknown keys are ignored, so clients of
 * any ART generation are accepted. Defaults live in worker/training-config.ts.
 */

const optional = <T extends z.ZodType>(schema: T) => schema.nullish();

export const ExperimentalConfigSchema = z
  .object({
    learning_rate: optional(z.number().positive()),
    loss_fn: optional(z.enum(["cispo", "ppo"])),
    ppo: optional(z.boolean()),
    epsilon: optional(z.number().min(0)),
    epsilon_high: optional(z.number().min(0)),
    importance_sampling_level: optional(z.enum(["token", "sequence", "average", "geometric_average"])),
    scale_rewards: optional(z.boolean()),
    normalize_advantages: optional(z.boolean()),
    advantage_balance: optional(z.number().min(-1).max(1)),
    allow_training_without_logprobs: optional(z.boolean()),
    mask_prob_ratio: optional(z.boolean()),
    max_negative_advantage_importance_sampling_weight: optional(z.number().positive()),
    kimi_k2_tau: optional(z.number()),
    /** The interface document's neutral spelling of kimi_k2_tau. */
    vendor_k2_tau: optional(z.number()),
    truncated_importance_sampling: optional(z.number().positive()),
    precalculate_logprobs: optional(z.boolean()),
    kl_penalty_coef: optional(z.number().min(0)),
    kl_penalty_source: optional(z.enum(["current_learner", "sample"])),
    kl_ref_adapter_path: optional(z.string()),
    kl_penalty_reference_step: optional(z.number().int().min(0)),
    kl_penalty_step_lag: optional(z.number().int().min(1)),
    num_trajectories_learning_rate_multiplier_power: optional(z.number()),
    scale_learning_rate_by_reward_std_dev: optional(z.boolean()),
    packed_sequence_length: optional(z.number().int().min(1)),
    logprob_calculation_chunk_size: optional(z.number().int().min(1)),
    plot_tensors: optional(z.boolean()),
  })
  .superRefine((config, ctx) => {
    if (config.kl_ref_adapter_path != null) {
      ctx.addIssue({
        code: "custom",
        path: ["kl_ref_adapter_path"],
        message: "kl_ref_adapter_path names a directory on the client's machine, which this server cannot read; use kl_penalty_reference_step or kl_penalty_step_lag",
      });
    }
    if (config.kl_penalty_reference_step != null && config.kl_penalty_step_lag != null) {
      ctx.addIssue({ code: "custom", path: ["kl_penalty_step_lag"], message: "kl_penalty_reference_step and kl_penalty_step_lag cannot both be set" });
    }
    if (config.loss_fn != null && config.ppo != null && (config.loss_fn === "ppo") !== config.ppo) {
      ctx.addIssue({ code: "custom", path: ["loss_fn"], message: `loss_fn '${config.loss_fn}' contradicts ppo=${String(config.ppo)}` });
    }
    if (config.kimi_k2_tau != null && config.vendor_k2_tau != null && config.kimi_k2_tau !== config.vendor_k2_tau) {
      ctx.addIssue({ code: "custom", path: ["vendor_k2_tau"], message: "kimi_k2_tau and vendor_k2_tau are the same setting and differ" });
    }
    if (config.packed_sequence_length != null && config.packed_sequence_length % (config.logprob_calculation_chunk_size ?? 1024) !== 0) {
      ctx.addIssue({ code: "custom", path: ["packed_sequence_length"], message: "packed_sequence_length must be a multiple of logprob_calculation_chunk_size (default 1024)" });
    }
  })
  .transform(({ vendor_k2_tau, kl_ref_adapter_path: _path, ...config }) => resolveRlConfig({ ...config, kimi_k2_tau: config.kimi_k2_tau ?? vendor_k2_tau } as RlConfigInput));

export const SftConfigSchema = z.object({
  batch_size: optional(z.union([z.number().int().min(1), z.literal("auto")])).describe('Rows per optimizer step; "auto" = 2'),
  learning_rate: optional(z.union([z.number().positive(), z.array(z.number().positive()).min(1)])).describe("One rate for every batch, or one per batch"),
  assistant_turns: optional(z.enum(["all", "last"])),
  metric_logging: optional(z.object({ enabled: optional(z.boolean()), target_training_step: optional(z.number().int().min(0)) })),
});

export type SftConfigRequest = z.output<typeof SftConfigSchema>;

/** The batch size an SFT request asks for ("auto" and null resolve to the default). */
export function sftBatchSize(config: SftConfigRequest | null | undefined): number {
  const size = config?.batch_size;
  return typeof size === "number" ? size : SFT_CONFIG_DEFAULTS.auto_batch_size;
}
