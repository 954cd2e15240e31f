/**
 * The `gradient_step` event data of one optimizer step (`docs/api/training.md#job-events`): flat numeric
 * values only, since the client converts every value with float().
 */
export interface RlStepMeasurements {
  loss: number;
  entropy: number | null;
  gradNorm: number;
  learningRate: number;
  klPolicyRef: number | null;
  probsCorr: number;
  numTrainableTokens: number;
  /**
   * The largest |ℓ_trainer − ℓ_sampler| over the trained tokens whose sampled logprob came with the
   * trajectory: 0 when the trainer recomputed exactly what the sampler returned; null without any.
   */
  samplerLogprobMaxDiff: number | null;
  /** Wall time of the step (forward, backward and update). */
  seconds: number;
  /** The trainer's ℓ of the row's tokens in prediction layout (index p scores token p + 1), before the update. */
  recomputedLogprobs?: Float64Array;
}

export function rlStepMetrics(step: RlStepMeasurements): Record<string, number> {
  return {
    loss: step.loss,
    ...(step.entropy !== null ? { entropy: step.entropy } : {}),
    grad_norm: step.gradNorm,
    learning_rate: step.learningRate,
    ...(step.klPolicyRef !== null ? { kl_policy_ref: step.klPolicyRef } : {}),
    probs_corr: step.probsCorr,
    num_trainable_tokens: step.numTrainableTokens,
    ...(step.samplerLogprobMaxDiff !== null ? { sampler_logprob_max_diff: step.samplerLogprobMaxDiff } : {}),
    tokens_per_second: tokensPerSecond(step.numTrainableTokens, step.seconds),
  };
}

export interface SftStepMeasurements {
  loss: number;
  learningRate: number;
  gradNorm: number;
  numTrajectories: number;
  numTokens: number;
  numTrainableTokens: number;
  seconds: number;
}

export function sftStepMetrics(step: SftStepMeasurements): Record<string, number> {
  return {
    loss: step.loss,
    learning_rate: step.learningRate,
    grad_norm: step.gradNorm,
    num_trajectories: step.numTrajectories,
    num_tokens: step.numTokens,
    num_trainable_tokens: step.numTrainableTokens,
    tokens_per_second: tokensPerSecond(step.numTrainableTokens, step.seconds),
  };
}

/** Trainable tokens per second of the step; 0 when no time was measured. */
function tokensPerSecond(tokens: number, seconds: number): number {
  return seconds > 0 ? tokens / seconds : 0;
}
