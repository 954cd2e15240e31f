import type { LoraAdapter } from "../lora/adapter.js";
import type { Transformer } from "../model/transformer.js";
import { AdamW, type AdamWState, clipGradNorm, OPTIMIZER_SETTINGS, type TrainingMode } from "./adamw.js";
import { NonFiniteTrainingError } from "./errors.js";
import { type RlLossInputs, rlLossInputs, withPrecalculatedLogprobs } from "./loss-inputs.js";
import type { PackedRow } from "./packing.js";
import { TRAINING_RANGES } from "./ranges.js";
import { type RlLossOptions, type RlRowLoss, rlRowLoss } from "./rl-loss.js";
import { packSftBatch, type SftSequence } from "./sft-packing.js";
import type { SftRow } from "./sft-tokenize.js";
import type { RlStepMeasurements, SftStepMeasurements } from "./step-metrics.js";
import { LoraGradients } from "./transformer/lora-gradients.js";
import { ModelGradients, type ParameterGradients } from "./transformer/model-gradients.js";
import { plainSequence } from "./transformer/sequence.js";
import type { TokenScores } from "./transformer/token-logprobs.js";
import { TrainingModel, type TrainingModelOptions } from "./transformer/training-model.js";

export interface TrainerOptions extends TrainingModelOptions {
  /** Optimizer moments saved with a checkpoint (`exportOptimizerState`), to continue from. */
  optimizerState?: AdamWState;
}

/** The loss settings of one RL step. */
export interface RlStepLoss {
  options: RlLossOptions;
  /** `precalculate_logprobs`: this row's `logprobs(row)` from before the job's first step. */
  precalculatedLogprobs?: Float64Array;
  /** KL reference logprobs of this row (`logprobs(row, { adapter: reference })`); needed when klPenaltyCoef > 0. */
  refLogprobs?: Float64Array;
}

export interface LogprobsOptions {
  /** The weights to score with: this trainer's adapter (default), another adapter, or null for the base model. */
  adapter?: LoraAdapter | null;
}

/**
 * The most tokens `sftStep` runs in one forward: enough rows at once for the matrix products to
 * keep two threads busy on small models; activation memory stays bounded by the transformer's
 * activation budget whatever the length.
 */
export const SFT_PACKED_TOKENS = 4096;

/** What a trainer updates: a LoRA adapter's factors, or every weight of the model ("full"). */
export type TrainTarget = LoraAdapter | "full";

/**
 * Trains a model one optimizer step at a time, as the job runner drives it (`docs/api/training.md`
 * docs/api/training.md#optimizer-steps, docs/api/training.md#sft): an RL step per packed row, an SFT step per
 * batch. Each step runs forward and backward, clips the global gradient norm (0.1 RL, 1.0 SFT) and updates
 * the parameters in place with AdamW (moments reset when the mode switches). The target is a LoRA adapter
 * (the base frozen; see `LoraTrainer`) or, with "full", every weight of the transformer itself (training a
 * model from scratch): the same forward and backward either way. Synchronous and self-contained: create and
 * call it inside a worker thread.
 */
export class Trainer {
  /** The adapter the forward runs with; null when the model's own weights train. */
  readonly adapter: LoraAdapter | null;
  protected readonly model: TrainingModel;
  private readonly optimizer: AdamW;
  private readonly gradients: ParameterGradients;
  private readonly parameters: Float32Array[];

  constructor(
    readonly transformer: Transformer,
    target: TrainTarget,
    options: TrainerOptions = {},
  ) {
    const { optimizerState, ...modelOptions } = options;
    this.model = TrainingModel.shared(transformer, modelOptions);
    if (target === "full") {
      this.adapter = null;
      const gradients = new ModelGradients(transformer);
      [this.gradients, this.parameters] = [gradients, gradients.values()];
    } else {
      const shapeKeys = ["numLayers", "hiddenSize", "intermediateSize", "numHeads", "numKvHeads", "headDim"] as const;
      const mismatch = shapeKeys.find((key) => target.modelConfig[key] !== transformer.config[key]);
      if (mismatch) throw new Error(`the adapter was made for a model with ${mismatch} ${target.modelConfig[mismatch]}, this one has ${transformer.config[mismatch]}`);
      this.adapter = target;
      [this.gradients, this.parameters] = [new LoraGradients(target), target.parameters()];
    }
    this.optimizer = new AdamW(
      this.gradients.tensors.map((tensor) => tensor.length),
      { kernels: transformer.kernels, state: optimizerState },
    );
  }

  /** Number of trained values (adapter factors, or every weight of the model). */
  get parameterCount(): number {
    return this.parameters.reduce((sum, tensor) => sum + tensor.length, 0);
  }

  /**
   * ℓ of the row's trained tokens in prediction layout (`rlLossInputs`: index p scores token
   * p + 1; NaN where nothing is trained). For `precalculate_logprobs` and KL reference logprobs.
   */
  logprobs(row: PackedRow, options: LogprobsOptions = {}): Float64Array {
    return this.model.forward(row, this.scoringAdapter(options), rlLossInputs(row)).logprobs;
  }

  /** ℓ and entropy of every next token of one plain sequence: index p scores tokens[p + 1]. */
  sequenceLogprobs(tokens: ArrayLike<number>, options: LogprobsOptions = {}): TokenScores {
    const targets = new Int32Array(tokens.length);
    const mask = new Uint8Array(tokens.length);
    for (let p = 0; p + 1 < tokens.length; p++) [targets[p], mask[p]] = [tokens[p + 1]!, 1];
    return this.score({ sequence: plainSequence(tokens), targets, mask }, options);
  }

  /**
   * ℓ and entropy of a sequence's masked targets (index p scores targets[p]), with no gradient:
   * SFT rows packed by `packSftBatch` score in one forward, as `sftStep` trains them.
   */
  score(sequence: SftSequence, options: LogprobsOptions = {}): TokenScores {
    return this.model.forward(sequence.sequence, this.scoringAdapter(options), { targets: sequence.targets, mask: sequence.mask });
  }

  /**
   * One RL optimizer step on one packed row at learning rate `learningRate` (already multiplied per
   * docs/api/training.md#optimizer-steps, docs/api/training.md#reward-std-lr).
   */
  rlStep(row: PackedRow, loss: RlStepLoss, learningRate: number): RlStepMeasurements {
    const started = performance.now();
    const { result, sampled, logprobs } = this.computeRlGradients(row, loss);
    const gradNorm = this.applyGradients("rl", learningRate);
    return {
      loss: result.loss,
      entropy: result.entropy,
      gradNorm,
      learningRate,
      klPolicyRef: result.klPolicyRef,
      probsCorr: result.probsCorr,
      numTrainableTokens: result.numTrainableTokens,
      samplerLogprobMaxDiff: samplerLogprobMaxDiff(sampled.oldLogprobs, logprobs, sampled.mask),
      seconds: (performance.now() - started) / 1000,
      recomputedLogprobs: logprobs,
    };
  }

  /**
   * Replaces the gradients with those of one RL row's loss (before clipping and the optimizer),
   * and returns the loss with what the step's metrics need. `rlStep` is this, then the update.
   */
  computeRlGradients(row: PackedRow, loss: RlStepLoss): { result: RlRowLoss; sampled: RlLossInputs; logprobs: Float64Array } {
    const sampled = rlLossInputs(row);
    const inputs = loss.precalculatedLogprobs ? withPrecalculatedLogprobs(sampled, loss.precalculatedLogprobs) : sampled;
    const scores = this.model.forward(row, this.adapter, inputs, true);
    const result = rlRowLoss(inputs, scores.logprobs, loss.options, { entropies: scores.entropies, ...(loss.refLogprobs ? { refLogprobs: loss.refLogprobs } : {}) });
    requireFiniteLoss(result.loss);
    this.gradients.zero();
    // A row without trained tokens has a zero gradient: skip the backward, still take the step.
    if (result.numTrainableTokens > 0) this.model.backward(result.gradient, this.gradients);
    return { result, sampled, logprobs: scores.logprobs };
  }

  /**
   * One SFT optimizer step on a batch: the token-mean cross-entropy over all its trained tokens
   * (`sftBatchLoss`), at the batch's learning rate. Consecutive rows run together, concatenated
   * into sequences of up to SFT_PACKED_TOKENS tokens, each row attending to itself only.
   */
  sftStep(batch: { rows: readonly SftRow[]; learningRate: number }): SftStepMeasurements {
    const sequences = packSftBatch(batch.rows, SFT_PACKED_TOKENS);
    return { ...this.sftSequencesStep({ sequences, learningRate: batch.learningRate }), numTrajectories: batch.rows.length };
  }

  /** `sftStep` over sequences that may be packed (`SftSequence`). */
  sftSequencesStep(batch: { sequences: readonly SftSequence[]; learningRate: number }): SftStepMeasurements {
    const started = performance.now();
    const numTrainableTokens = batch.sequences.reduce((sum, { mask }) => sum + countOnes(mask), 0);
    const loss = this.computeSftGradients(batch.sequences, numTrainableTokens);
    requireFiniteLoss(loss);
    const gradNorm = this.applyGradients("sft", batch.learningRate);
    return {
      loss,
      learningRate: batch.learningRate,
      gradNorm,
      numTrajectories: batch.sequences.length,
      numTokens: batch.sequences.reduce((sum, { sequence }) => sum + sequence.length, 0),
      numTrainableTokens,
      seconds: (performance.now() - started) / 1000,
    };
  }

  /**
   * Replaces the gradients with those of the SFT loss over `sequences`, the token mean taken over
   * `numTrainableTokens` (the whole batch's, which may span several trainers: data parallelism
   * adds their gradients up). Returns these sequences' part of the loss, −Σ ℓ·m / numTrainableTokens.
   */
  computeSftGradients(sequences: readonly SftSequence[], numTrainableTokens: number): number {
    this.gradients.zero();
    let loss = 0;
    for (const { sequence, targets, mask } of sequences) {
      const logprobs = this.model.forward(sequence, this.adapter, { targets, mask }, true).logprobs;
      // dLoss/dℓ = −m / N does not depend on ℓ, so each sequence's backward runs right after its forward.
      const gradient = new Float64Array(mask.length);
      for (let p = 0; p < mask.length; p++) {
        if (!mask[p]) continue;
        gradient[p] = -1 / numTrainableTokens;
        loss -= logprobs[p]! / numTrainableTokens;
      }
      if (numTrainableTokens > 0 && countOnes(mask) > 0) this.model.backward(gradient, this.gradients);
    }
    return loss;
  }

  /** The gradient tensors the next `applyGradients` uses, aligned with the parameters (live: may be overwritten, e.g. with a sum over replicas). */
  get gradientTensors(): readonly Float32Array[] {
    return this.gradients.tensors;
  }

  /** Clips the current gradients, switches the optimizer to the mode if needed, steps; returns the norm before clipping. */
  applyGradients(mode: TrainingMode, learningRate: number): number {
    // The rate after every multiplier (K^p, reward std dev): the request ranges bound each factor, not their product.
    if (!(learningRate > 0 && learningRate <= TRAINING_RANGES.learningRate.max)) {
      throw new NonFiniteTrainingError(`the step's learning rate ${learningRate} is outside (0, ${TRAINING_RANGES.learningRate.max}]; the weights would diverge`);
    }
    const gradNorm = clipGradNorm(this.gradients.tensors, OPTIMIZER_SETTINGS[mode].maxGradNorm, this.transformer.kernels);
    this.optimizer.beginJob(mode);
    this.optimizer.step(this.parameters, this.gradients.tensors, learningRate);
    if (!this.adapter) this.transformer.kernels.syncWeights();
    return gradNorm;
  }

  /** The optimizer moments, to keep with a checkpoint and pass back as `optimizerState`. */
  exportOptimizerState(): AdamWState {
    return this.optimizer.exportState();
  }

  private scoringAdapter(options: LogprobsOptions): LoraAdapter | null {
    return options.adapter === undefined ? this.adapter : options.adapter;
  }
}

/** max |recomputed − sampled| over the trained positions that carry a sampled logprob; null if none do. */
function samplerLogprobMaxDiff(sampled: Float64Array, recomputed: Float64Array, mask: Uint8Array): number | null {
  let worst: number | null = null;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p] || !Number.isFinite(sampled[p]!)) continue;
    worst = Math.max(worst ?? 0, Math.abs(recomputed[p]! - sampled[p]!));
  }
  return worst;
}

/** A non-finite loss means non-finite weights or logits: its gradient could only poison the weights further. */
function requireFiniteLoss(loss: number): void {
  if (!Number.isFinite(loss)) throw new NonFiniteTrainingError(`the loss is not finite (${loss}); the weights this step starts from may already be non-finite`);
}

function countOnes(mask: Uint8Array): number {
  let count = 0;
  for (let p = 0; p < mask.length; p++) count += mask[p]!;
  return count;
}
