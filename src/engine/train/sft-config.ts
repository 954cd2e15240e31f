import { z } from "zod";
import { TrainingInputError } from "./errors.js";

/**
 * `config` of an SFT job (`spec/training.md` §7, `spec/interface.md` §2.3): batch size (an
 * integer or "auto" = 2), a learning rate for every batch or one per batch, and which assistant
 * turns are trained. The learning-rate list can only be checked against the batch count once the
 * data is read: `planSftBatches`.
 */
export const SftConfigSchema = z.object({
  batch_size: z.union([z.int().min(1), z.literal("auto")]).nullish().describe('Trajectories per optimizer step; "auto" (default) is 2'),
  learning_rate: z
    .union([z.number().min(0), z.array(z.number().min(0)).min(1)])
    .nullish()
    .describe("One rate for every batch, or one per batch (default 5e-5)"),
  assistant_turns: z.enum(["all", "last"]).nullish().describe('Train every assistant turn ("all", default) or only the final one'),
  metric_logging: z.object({ enabled: z.boolean().nullish(), target_training_step: z.int().nullish() }).nullish(),
});

export type SftConfigReq = z.input<typeof SftConfigSchema>;

export const DEFAULT_SFT_LEARNING_RATE = 5e-5;
export const AUTO_SFT_BATCH_SIZE = 2;

export interface SftTrainConfig {
  batchSize: number;
  learningRate: number | number[];
  assistantTurns: "all" | "last";
}

export function resolveSftTrainConfig(raw: SftConfigReq | null | undefined): SftTrainConfig {
  const config = SftConfigSchema.parse(raw ?? {});
  return {
    batchSize: config.batch_size === "auto" || config.batch_size === null || config.batch_size === undefined ? AUTO_SFT_BATCH_SIZE : config.batch_size,
    learningRate: config.learning_rate ?? DEFAULT_SFT_LEARNING_RATE,
    assistantTurns: config.assistant_turns ?? "all",
  };
}

export interface SftBatchPlan {
  batchSize: number;
  /** One entry per batch, in order. */
  learningRates: number[];
}

/**
 * Consecutive batches of `batchSize` trajectories in file order; a learning-rate list must have
 * exactly one entry per batch (`TrainingInputError` at `config.learning_rate` otherwise).
 */
export function planSftBatches(numTrajectories: number, config: SftTrainConfig): SftBatchPlan {
  const batchCount = Math.ceil(numTrajectories / config.batchSize);
  if (Array.isArray(config.learningRate)) {
    if (config.learningRate.length !== batchCount) {
      throw new TrainingInputError(
        ["config", "learning_rate"],
        `the learning-rate schedule has ${config.learningRate.length} entries but ${numTrajectories} trajectories in batches of ${config.batchSize} make ${batchCount} batches`,
      );
    }
    return { batchSize: config.batchSize, learningRates: [...config.learningRate] };
  }
  return { batchSize: config.batchSize, learningRates: new Array<number>(batchCount).fill(config.learningRate) };
}
