import type { LoadedModel } from "../../model/load.js";
import { rlLossOptions } from "../config.js";
import { TrainingInputError } from "../errors.js";
import { rewardStdDevLearningRateMultiplier, rowLearningRate } from "../learning-rate.js";
import type { LoraTrainer } from "../lora-trainer.js";
import { autoPackedSequenceLength, batchHasTrainableTokens, packTokenizedResults } from "../packing.js";
import { rlStepMetrics } from "../step-metrics.js";
import { type TokenizedResult, tokenizeTrajectoryGroups } from "../tokenize-groups.js";
import { turnTokenLogprobs } from "../token-logprobs.js";
import { referenceAdapter } from "./start.js";
import { modelTemplateDeps } from "./template-deps.js";
import type { RlJobWork, TrainerUpdate, TrainingJobSpec } from "./types.js";

/**
 * An RL job (`spec/training.md` §5–6): the groups tokenized with the model's tokenizer and chat
 * template from the sampled token ids, packed into rows (auto length capped at the model's
 * maximum), then one optimizer step per row with its own learning rate. Yields `started` and one
 * `gradient_step` per row; returns whether anything was trained (nothing to learn: `started` with
 * 0 sequences, and the weights stay as they were).
 */
export function* rlJobSteps(
  model: LoadedModel,
  trainer: LoraTrainer,
  spec: Pick<TrainingJobSpec, "klReference">,
  work: RlJobWork,
  random: () => number,
): Generator<TrainerUpdate, boolean> {
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
    tokenized.results.length > 0
      ? packTokenizedResults(tokenized.results, rowLength, { padTokenId: model.tokenizer.eosTokenId ?? 0, advantageBalance: config.advantage_balance, random })
      : { sequenceLength: rowLength, rows: [] };
  if (batch.rows.length === 0 || !batchHasTrainableTokens(batch, config.allow_training_without_logprobs)) {
    yield { type: "started", numSequences: 0 };
    return false;
  }
  yield { type: "started", numSequences: batch.rows.length };

  const options = rlLossOptions(config);
  // Old logprobs from the weights the job starts with, before any of its steps changes them.
  const precalculated = config.precalculate_logprobs ? batch.rows.map((row) => trainer.logprobs(row)) : undefined;
  const reference = config.kl_penalty_coef > 0 ? referenceAdapter(model, spec.klReference?.files ?? null) : undefined;
  const multiplier = config.scale_learning_rate_by_reward_std_dev ? rewardStdDevLearningRateMultiplier(work.rewardStdDevHistory) : 1;
  for (const [index, row] of batch.rows.entries()) {
    const learningRate = rowLearningRate(config.learning_rate, row, config.num_trajectories_learning_rate_multiplier_power, multiplier);
    const measured = trainer.rlStep(
      row,
      {
        options,
        ...(precalculated ? { precalculatedLogprobs: precalculated[index]! } : {}),
        ...(reference !== undefined ? { refLogprobs: trainer.logprobs(row, { adapter: reference }) } : {}),
      },
      learningRate,
    );
    const tokenLogprobs = measured.recomputedLogprobs ? turnTokenLogprobs(row, measured.recomputedLogprobs) : [];
    yield { type: "gradient_step", metrics: { ...rlStepMetrics(measured), ...groupCounts }, tokenLogprobs };
  }
  return true;
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
