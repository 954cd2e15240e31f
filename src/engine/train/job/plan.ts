import { createHash } from "node:crypto";
import type { ModelFiles } from "../../model/load.js";
import { Rng } from "../../sampling/rng.js";
import { TrainingInputError } from "../errors.js";
import { rewardStdDevLearningRateMultiplier, rowLearningRate } from "../learning-rate.js";
import { autoPackedSequenceLength, batchHasTrainableTokens, type PackedRow, packTokenizedResults } from "../packing.js";
import { sftBatchPlan } from "../sft-config.js";
import { sftExampleFromJson, tokenizeSftExample } from "../sft-tokenize.js";
import { buildSftBatches, type SftBatch } from "../sft.js";
import { type TokenizedResult, tokenizeTrajectoryGroups } from "../tokenize-groups.js";
import { modelTemplateDeps } from "./template-deps.js";
import type { RlJobWork, SftJobWork } from "./types.js";

/**
 * What a job's optimizer steps train on, decided before any weight is touched: the tokenized,
 * packed and labelled rows with each step's learning rate. Only the tokenizer, the chat template
 * and the model's config are needed, so the built-in trainer and the server (for external
 * PyTorch workers, `src/server/workers/`) plan a job identically.
 */
export interface RlPlan {
  /** One optimizer step per row; empty when there is nothing to learn (the job still advances its step). */
  rows: PackedRow[];
  /**
   * Each row's learning rate (docs/api/training.md#optimizer-steps, docs/api/training.md#reward-std-lr: K^p
   * and the reward-std-dev multiplier applied).
   */
  learningRates: number[];
  /** Added to every gradient_step's metrics. */
  groupCounts: { num_groups_submitted: number; num_groups_trainable: number; num_trajectories: number };
}

/** The seeded uniform source of a job's shuffles (tokenization, packing): a job plans the same every time. */
export function jobRandom(jobId: string): () => number {
  const rng = Rng.fromSeed(createHash("sha256").update(jobId).digest().readBigInt64LE(0));
  return () => rng.nextFloat();
}

/**
 * An RL job's rows (`docs/api/training.md#rl-training`, `docs/api/training.md#rl-tokenization`): the groups
 * tokenized with the model's tokenizer and chat template from the sampled token ids, packed into rows (auto
 * length capped at the model's maximum).
 */
export function planRlJob(model: ModelFiles, work: RlJobWork, random: () => number): RlPlan {
  const { config } = work;
  const tokenized = tokenizeTrajectoryGroups(work.groups, modelTemplateDeps(model), {
    scaleRewards: config.scale_rewards,
    allowTrainingWithoutLogprobs: config.allow_training_without_logprobs,
    random,
  });
  checkTokenIds(tokenized.results, model.config.vocabSize);
  const groupCounts = {
    num_groups_submitted: tokenized.numGroupsSubmitted,
    num_groups_trainable: tokenized.numGroupsTrainable,
    num_trajectories: tokenized.numTrajectories,
  };
  const maxLength = model.config.maxPositionEmbeddings;
  const longest = tokenized.results.reduce((most, result) => Math.max(most, result.tokenIds.length), 0);
  // Positions past the model's maximum cannot run, so an explicit row length is capped there too.
  const rowLength = Math.min(config.packed_sequence_length ?? autoPackedSequenceLength(longest, maxLength), maxLength);
  const batch =
    tokenized.results.length > 0 ? packTokenizedResults(tokenized.results, rowLength, { padTokenId: model.tokenizer.eosTokenId ?? 0, advantageBalance: config.advantage_balance, random }) : { sequenceLength: rowLength, rows: [] };
  if (batch.rows.length === 0 || !batchHasTrainableTokens(batch, config.allow_training_without_logprobs)) return { rows: [], learningRates: [], groupCounts };
  const multiplier = config.scale_learning_rate_by_reward_std_dev ? rewardStdDevLearningRateMultiplier(work.rewardStdDevHistory) : 1;
  const learningRates = batch.rows.map((row) => rowLearningRate(config.learning_rate, row, config.num_trajectories_learning_rate_multiplier_power, multiplier));
  return { rows: batch.rows, learningRates, groupCounts };
}

/**
 * An SFT job's batches (`docs/api/training.md#sft`): every row tokenized with the chat template and
 * labelled per `assistant_turns`, consecutive batches in file order with their own learning rates
 * (rows longer than the model's maximum are dropped; a batch left with nothing to train is skipped).
 */
export function planSftJob(model: ModelFiles, work: SftJobWork): SftBatch[] {
  const deps = modelTemplateDeps(model);
  const rows = work.rows.map((line, index) => {
    const loc = [`${work.fileName} row ${index + 1}`];
    return tokenizeSftExample(sftExampleFromJson(line, loc), deps, work.config.assistant_turns, loc);
  });
  return buildSftBatches(rows, sftBatchPlan(work.config), model.config.maxPositionEmbeddings).batches;
}

/** Sampled ids the model cannot score (completions sampled from another model) are bad input, not a crash. */
function checkTokenIds(results: readonly TokenizedResult[], vocabSize: number): void {
  for (const result of results) {
    const bad = result.tokenIds.find((id) => !(Number.isInteger(id) && id >= 0 && id < vocabSize));
    if (bad === undefined) continue;
    throw new TrainingInputError(
      ["trajectory_groups", result.groupIndex, "trajectories", result.trajectoryIndex],
      `token id ${bad} is outside the model's vocabulary of ${vocabSize} tokens; were these completions sampled from another model?`,
    );
  }
}
