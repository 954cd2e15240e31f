/**
 * The trainer's model-independent math (`docs/api/training.md#trajectories`,
 * `docs/api/training.md#rl-training`, `docs/api/training.md#rl-tokenization`, `docs/api/training.md#sft`):
 * pure functions over typed arrays, shared by the RL and SFT job runners and the backward pass.
 *
 * RL job, in order:
 *   config      resolveRlConfig(experimental_config)                   (ExperimentalConfigSchema validates the request; the job stores the result)
 *   tokenize    tokenizeTrajectoryGroups(groups, {tokenizer, render, chatTemplate}, …)
 *               → results + num_groups_submitted / num_groups_trainable / num_trajectories
 *               (no results → the "nothing trainable" path: the step advances with the same weights)
 *   pack        packTokenizedResults(results, packedSequenceLength ?? autoPackedSequenceLength(longest, modelMax), …)
 *               → rows with weights and advantages normalised over the whole batch
 *   per row     rlLossInputs(row) (prediction layout; withPrecalculatedLogprobs for precalculate_logprobs)
 *               forward over row.tokens with attention `mayAttend`/`rowSegments` and positions row.inputPos
 *               → ℓ (and entropies, reference ℓ for the KL penalty)
 *               rlRowLoss(inputs, ℓ, rlLossOptions(config), …) → loss, dLoss/dℓ, metrics
 *               backward → parameter gradients; clipGradNorm(…, 0.1); AdamW.step(…, rowLearningRate(…))
 *               rlStepMetrics(…) → the gradient_step event
 * SFT job: resolveSftConfig (with the row count) → sftExampleFromJson per line → tokenizeSftExample
 *   → buildSftBatches(rows, sftBatchPlan(config), …) → per batch sftLossInputs + sftBatchLoss → clipGradNorm(…, 1.0) → AdamW → sftStepMetrics.
 * /log: trajectoryGroupLogMetrics(groups), stored under `{split}/{metric}`.
 *
 * The model side: `LoraTrainer` (lora-trainer.ts) runs the forward/backward of a `Transformer`
 * with a LoRA adapter over packed rows and SFT rows and applies the steps above; `TrainingModel`
 * (transformer/) is the forward that keeps activations and the backward to the LoRA gradients,
 * on the numeric kernels of `engine/kernels` (forward and backward side by side).
 */
export * from "./adamw.js";
export * from "./advantages.js";
export * from "./attention.js";
export * from "./chat-render.js";
export * from "./config.js";
export * from "./errors.js";
export * from "./importance-ratios.js";
export * from "./learning-rate.js";
export * from "./log-metrics.js";
export * from "./lora-trainer.js";
export * from "./trainer.js";
export * from "./loss-inputs.js";
export * from "./packing.js";
export * from "./rl-loss.js";
export * from "./sft-config.js";
export * from "./sft-packing.js";
export * from "./sft-tokenize.js";
export * from "./sft.js";
export * from "./step-metrics.js";
export * from "./tokenize-groups.js";
export * from "./tokenize-history.js";
export * from "./trajectory.js";
export * from "./transformer/lora-gradients.js";
export * from "./transformer/model-gradients.js";
export * from "./transformer/sequence.js";
export * from "./transformer/token-logprobs.js";
export * from "./transformer/training-model.js";
