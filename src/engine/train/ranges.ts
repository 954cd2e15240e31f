/**
 * The ranges the training knobs accept (docs/decisions/training.md#D-TRAIN-025). A value past
 * them cannot train anything useful and can only drive the weights to infinity, so the job is
 * refused with a 422 when it is created rather than committing a poisoned checkpoint.
 */
export const TRAINING_RANGES = {
  /** Every learning rate (RL `learning_rate`, each SFT rate): above 1, one AdamW step moves a weight by more than its own scale. */
  learningRate: { exclusiveMin: 0, max: 1 },
  /** p of LR × K^p: with K in the hundreds, |p| = 2 already scales the rate by 10⁴ or more. */
  numTrajectoriesPower: { min: -2, max: 2 },
  /** ε, ε_high, the importance-weight caps: clip bounds on a ratio, finite and far past any useful clip. */
  clipBound: { max: 1e6 },
  /** kimi_k2_tau (either sign) and kl_penalty_coef: advantage shaping coefficients. */
  coefficient: { max: 1e4 },
  /** packed_sequence_length and logprob_calculation_chunk_size, in tokens. */
  sequenceTokens: { max: 1 << 20 },
} as const;
