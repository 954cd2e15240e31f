import type { LoadedModel } from "../../model/load.js";
import { rlLossOptions } from "../config.js";
import type { LoraTrainer } from "../lora-trainer.js";
import { rlStepMetrics } from "../step-metrics.js";
import { turnTokenLogprobs } from "../token-logprobs.js";
import { planRlJob } from "./plan.js";
import { referenceAdapter } from "./start.js";
import type { RlJobWork, TrainerUpdate, TrainingJobSpec } from "./types.js";

/**
 * An RL job (`docs/api/training.md#rl-training`, `docs/api/training.md#rl-tokenization`): the rows
 * `planRlJob` makes, then one optimizer step per row with its own learning rate. Yields `started` and one
 * `gradient_step` per row; returns whether anything was trained (nothing to learn: `started` with 0
 * sequences, and the weights stay as they were).
 */
export function* rlJobSteps(model: LoadedModel, trainer: LoraTrainer, spec: Pick<TrainingJobSpec, "klReference">, work: RlJobWork, random: () => number): Generator<TrainerUpdate, boolean> {
  const { config } = work;
  const plan = planRlJob(model, work, random);
  yield { type: "started", numSequences: plan.rows.length };
  if (plan.rows.length === 0) return false;

  const options = rlLossOptions(config);
  // Old logprobs from the weights the job starts with, before any of its steps changes them.
  const precalculated = config.precalculate_logprobs ? plan.rows.map((row) => trainer.logprobs(row)) : undefined;
  const reference = config.kl_penalty_coef > 0 ? referenceAdapter(model, spec.klReference?.files ?? null) : undefined;
  for (const [index, row] of plan.rows.entries()) {
    const measured = trainer.rlStep(
      row,
      {
        options,
        ...(precalculated ? { precalculatedLogprobs: precalculated[index]! } : {}),
        ...(reference !== undefined ? { refLogprobs: trainer.logprobs(row, { adapter: reference }) } : {}),
      },
      plan.learningRates[index]!,
    );
    const tokenLogprobs = measured.recomputedLogprobs ? turnTokenLogprobs(row, measured.recomputedLogprobs) : [];
    yield { type: "gradient_step", metrics: { ...rlStepMetrics(measured), ...plan.groupCounts }, tokenLogprobs };
  }
  return true;
}
