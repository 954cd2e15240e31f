import { z } from "zod";
import { TrainingInputError } from "./errors.js";
import { TRAINING_RANGES } from "./ranges.js";

const SftLearningRate = z.number().positive().max(TRAINING_RANGES.learningRate.max);

/**
 * `config` of an SFT job (`docs/api/training.md#sft`, `docs/api/training.md#sft-jobs`), in one place: the
 * request schema, the defaults, and the resolved config a job stores (one learning rate per
 * batch). The learning-rate list can only be checked against the batch count once the data is
 * read, so `resolveSftConfig` takes the row count.
 */
export const SftConfigSchema = z.object({
  batch_size: z
    .union([z.int().min(1), z.literal("auto")])
    .nullish()
    .describe('Rows per optimizer step; "auto" (default) is 2'),
  learning_rate: z
    .union([SftLearningRate, z.array(SftLearningRate).min(1)])
    .nullish()
    .describe("One rate for every batch, or one per batch (default 5e-5)"),
  assistant_turns: z.enum(["all", "last"]).nullish().describe('Train every assistant turn ("all", default) or only the final one'),
  metric_logging: z.object({ enabled: z.boolean().nullish(), target_training_step: z.int().min(0).nullish() }).nullish(),
});

export type SftConfigReq = z.input<typeof SftConfigSchema>;

export type AssistantTurns = "all" | "last";

export const SFT_CONFIG_DEFAULTS = {
  /** "auto" resolves to 2 (docs/api/training.md#sft). */
  auto_batch_size: 2,
  learning_rate: 5e-5,
  assistant_turns: "all",
} as const;

/** SFT settings with "auto" and the learning-rate form resolved: what a job stores and the trainer reads. */
export interface SftTrainingConfig {
  batch_size: number;
  /** One learning rate per batch, in batch order. */
  learning_rates: number[];
  assistant_turns: AssistantTurns;
  metric_logging: { enabled: boolean; target_training_step: number | null } | null;
  /** The request's free-form experimental_config, passed through. */
  experimental_config: Record<string, unknown>;
}

/** The batch size a request asks for ("auto" and null resolve to the default). */
export function sftBatchSize(config: SftConfigReq | null | undefined): number {
  const size = config?.batch_size;
  return typeof size === "number" ? size : SFT_CONFIG_DEFAULTS.auto_batch_size;
}

/** Consecutive batches of `batchSize` rows in file order. */
export function sftBatchCount(rowCount: number, batchSize: number): number {
  return Math.ceil(rowCount / batchSize);
}

/**
 * Applies the defaults for data of `rowCount` rows. A learning-rate list must have exactly one
 * entry per batch (`TrainingInputError` at `config.learning_rate` otherwise).
 */
export function resolveSftConfig(config: SftConfigReq | null | undefined, rowCount: number, experimentalConfig: Record<string, unknown> | null = null): SftTrainingConfig {
  const batchSize = sftBatchSize(config);
  const batches = sftBatchCount(rowCount, batchSize);
  const rate = config?.learning_rate ?? SFT_CONFIG_DEFAULTS.learning_rate;
  if (Array.isArray(rate) && rate.length !== batches) {
    throw new TrainingInputError(
      ["config", "learning_rate"],
      `learning_rate lists ${rate.length} rates but the data makes ${batches} batches (${rowCount} rows, batch_size ${batchSize}); give one rate per batch or a single number`,
    );
  }
  const metricLogging = config?.metric_logging;
  return {
    batch_size: batchSize,
    learning_rates: Array.isArray(rate) ? [...rate] : new Array<number>(batches).fill(rate),
    assistant_turns: config?.assistant_turns ?? SFT_CONFIG_DEFAULTS.assistant_turns,
    metric_logging: metricLogging ? { enabled: metricLogging.enabled ?? false, target_training_step: metricLogging.target_training_step ?? null } : null,
    experimental_config: experimentalConfig ?? {},
  };
}

/** Batch size and the rate of each batch, as `buildSftBatches` takes them. */
export interface SftBatchPlan {
  batchSize: number;
  /** One entry per batch, in order. */
  learningRates: number[];
}

export function sftBatchPlan(config: Pick<SftTrainingConfig, "batch_size" | "learning_rates">): SftBatchPlan {
  return { batchSize: config.batch_size, learningRates: config.learning_rates };
}
