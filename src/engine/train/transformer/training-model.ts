import type { LoraAdapter } from "../../lora/adapter.js";
import { ropeInverseFrequencies, RopeTable } from "../../model/rope.js";
import type { Transformer } from "../../model/transformer.js";
import { DecoderLayer } from "../../model/decoder-layer.js";
import { type ActivationSizes, LayerActivations, SharedActivations } from "../../model/layer-activations.js";
import { expandRows } from "../../model/selected-rows.js";
import { GradientBuffers } from "./activations.js";
import { DecoderLayerBackward, type PassLayout } from "./decoder-layer-backward.js";
import { ModelGradients, type ParameterGradients } from "./model-gradients.js";
import { PackedAttention } from "./packed-attention.js";
import { attentionSpans, type TrainingSequence } from "./sequence.js";
import { TokenScorer, type TokenScores } from "./token-logprobs.js";

export interface TrainingModelOptions {
  /** Rows of logits the LM head computes at once. Default: 32 MiB worth, at least 1. */
  logitsChunkRows?: number;
  /**
   * Bytes of logits (with their rows' hidden states) kept from the forward for the backward; a
   * pass that scores more rows computes them again in the backward, a chunk at a time. Default 256 MiB.
   */
  logitsHoldBytes?: number;
  /**
   * Bytes of per-layer activations kept between forward and backward: the first layers that fit
   * keep theirs; for the others only the layer's input is kept and its forward is recomputed just
   * before its backward. Default 2 GiB.
   */
  activationBudgetBytes?: number;
}

/** Which positions to score: ℓ_p = log p(targets[p] | tokens ≤ p) where mask[p] = 1 (prediction layout). */
export interface ScoreRequest {
  targets: Int32Array;
  mask: Uint8Array;
}

/**
 * The trainer's view of a `Transformer`: a forward over one (packed) sequence that keeps what the
 * backward needs, and the backward from dLoss/dℓ to the gradients of a LoRA adapter's factors
 * (`LoraGradients`) or of every weight of the model (`ModelGradients`, full-parameter training).
 * It runs the model's own forward kernels, so its ℓ equal the logprobs inference computes. Not
 * reentrant: one pass at a time (one per worker thread).
 */
export class TrainingModel {
  private static readonly byTransformer = new WeakMap<Transformer, Map<string, TrainingModel>>();

  /**
   * The one training model of `transformer` with these options. Its buffers (a step's activations
   * and gradients, hundreds of MB for long rows) are made once and kept for every trainer of the
   * model: a job's trainer is new, and allocating them afresh cost its first steps 3-5 times their
   * time in page faults (D-TRAINER-051).
   */
  static shared(transformer: Transformer, options: TrainingModelOptions = {}): TrainingModel {
    let models = TrainingModel.byTransformer.get(transformer);
    if (!models) TrainingModel.byTransformer.set(transformer, (models = new Map()));
    const key = `${options.logitsChunkRows ?? ""}/${options.logitsHoldBytes ?? ""}/${options.activationBudgetBytes ?? ""}`;
    let model = models.get(key);
    if (!model) models.set(key, (model = new TrainingModel(transformer, options)));
    return model;
  }

  private readonly layer: DecoderLayer;
  private readonly layerBackward: DecoderLayerBackward;
  private readonly attention: PackedAttention;
  private readonly scorer: TokenScorer;
  private readonly rope: RopeTable;
  private readonly sizes: ActivationSizes;
  private readonly budget: number;
  private readonly layerActivations: LayerActivations[] = [];
  private readonly sharedActivations = new SharedActivations();
  private readonly gradientBuffers: GradientBuffers;
  /** Layer l's input at [l·rows·hidden, (l+1)·rows·hidden); the final hidden state last. */
  private layerInputs = new Float32Array(0);
  private dHidden = new Float32Array(0);
  /** The last forward: its pass, its tokens, how many of its first layers kept their activations. */
  /** The last forward: its pass, tokens, kept layers and scored rows (`scoredRows`). */
  private last: { pass: PassLayout; tokens: Int32Array; kept: number; scored: Int32Array | undefined; backwardReady: boolean } | null = null;

  constructor(
    readonly transformer: Transformer,
    options: TrainingModelOptions = {},
  ) {
    const { config, kernels, weights } = transformer;
    this.sizes = { hidden: config.hiddenSize, queries: config.numHeads * config.headDim, keyValues: config.numKvHeads * config.headDim, intermediate: config.intermediateSize };
    this.rope = new RopeTable(ropeInverseFrequencies(config), config.maxPositionEmbeddings);
    this.attention = new PackedAttention(kernels, { heads: config.numHeads, kvHeads: config.numKvHeads, headDim: config.headDim });
    this.layer = new DecoderLayer(config, kernels, this.rope);
    this.layerBackward = new DecoderLayerBackward(config, kernels, this.rope, this.attention);
    const chunkRows = options.logitsChunkRows ?? Math.max(1, Math.floor((32 << 20) / (4 * config.vocabSize)));
    if (!Number.isInteger(chunkRows) || chunkRows < 1) throw new RangeError(`logitsChunkRows must be a positive integer, got ${chunkRows}`);
    const holdBytes = options.logitsHoldBytes ?? 2 ** 28;
    if (!(holdBytes >= 0)) throw new RangeError(`logitsHoldBytes must be a number ≥ 0, got ${holdBytes}`);
    this.scorer = new TokenScorer({ kernels, weights, eps: config.rmsNormEps, hidden: config.hiddenSize, vocab: config.vocabSize, chunkRows, holdBytes });
    this.budget = options.activationBudgetBytes ?? 2 ** 31;
    this.gradientBuffers = new GradientBuffers(this.sizes);
  }

  /**
   * Runs the sequence with `adapter` (null: the base model) and returns ℓ and the entropy at the
   * requested positions (arrays as long as `request.mask`; NaN elsewhere). With
   * `forBackward`, the activations stay for one `backward` call.
   */
  forward(sequence: TrainingSequence, adapter: LoraAdapter | null, request: ScoreRequest, forBackward = false): TokenScores {
    const { config, kernels, weights } = this.transformer;
    const rows = sequence.length;
    this.check(sequence, request);
    const positions = sequence.inputPos.subarray(0, rows);
    const spans = attentionSpans(sequence);
    const pass: PassLayout = {
      rows,
      positions,
      spans,
      adapter,
      adapters: [{ start: 0, rows, adapter: adapter ?? undefined }],
      attend: (_layer, out, queries, keys, values) => this.attention.forward(out, queries, keys, values, spans),
      keepProjections: forBackward && adapter !== null,
    };
    let maxPosition = 0;
    for (let p = 0; p < rows; p++) maxPosition = Math.max(maxPosition, pass.positions[p]!);
    this.rope.ensure(maxPosition + 1);

    const rank = adapter?.rank ?? 0;
    // The first `kept` layers keep their activations; the rest share one slot and are recomputed.
    const layerBytes = rows * LayerActivations.floatsPerRow(this.sizes, rank) * 4;
    const kept = forBackward ? Math.min(config.numLayers, Math.floor(this.budget / layerBytes)) : 0;
    const width = rows * config.hiddenSize;
    if (this.layerInputs.length < (config.numLayers + 1) * width) this.layerInputs = new Float32Array((config.numLayers + 1) * width);
    const inputOf = (layer: number) => this.layerInputs.subarray(layer * width, (layer + 1) * width);

    kernels.embed(inputOf(0), weights.embedTokens, sequence.tokens.subarray(0, rows));
    // The last layer goes on past attention only at the scored positions: nothing else reads its
    // output, so elsewhere its gradient is zero too.
    const scored = scoredRows(request.mask, rows);
    for (let layer = 0; layer < config.numLayers; layer++) {
      const acts = this.activations(Math.min(layer, kept), rows, rank);
      const outputRows = layer === config.numLayers - 1 ? scored : undefined;
      this.layer.forward(layer, weights.layers[layer]!, pass, acts, inputOf(layer), inputOf(layer + 1), outputRows);
    }
    // Back to their positions, where the scorer reads them.
    if (scored) expandRows(inputOf(config.numLayers), scored, config.hiddenSize, rows);
    const scores: TokenScores = { logprobs: new Float64Array(request.mask.length), entropies: new Float64Array(request.mask.length) };
    this.scorer.score(inputOf(config.numLayers), rows, request.targets, request.mask, scores);
    this.last = { pass, tokens: sequence.tokens.subarray(0, rows), kept, scored, backwardReady: forBackward };
    return scores;
  }

  /**
   * Adds the gradients of the last `forward(…, true)` into `gradients`, from dLoss/dℓ in the same
   * prediction layout: dLoss/d(A, B) of the adapter it ran with (`LoraGradients`), or, after a
   * forward without adapter, dLoss/dθ of every weight of the model (`ModelGradients`).
   */
  backward(dLogprobs: Float64Array, gradients: ParameterGradients): void {
    const last = this.last;
    if (!last?.backwardReady) throw new Error("backward needs a forward(…, forBackward = true) first");
    last.backwardReady = false;
    const { pass } = last;
    let full: ModelGradients | undefined;
    if (gradients instanceof ModelGradients) {
      if (pass.adapter) throw new Error("full-parameter gradients need a forward without adapter");
      if (gradients.transformer !== this.transformer) throw new Error("these gradients belong to another model");
      full = gradients;
    } else if (!pass.adapter || gradients.adapter !== pass.adapter) {
      throw new Error("backward computes gradients for the adapter the forward ran with");
    }
    const { config, weights } = this.transformer;
    const { rows } = pass;
    const width = rows * config.hiddenSize;
    const inputOf = (layer: number) => this.layerInputs.subarray(layer * width, (layer + 1) * width);
    if (this.dHidden.length < width) this.dHidden = new Float32Array(width);
    const dHidden = this.dHidden.subarray(0, width);
    dHidden.fill(0);
    this.scorer.backward(inputOf(config.numLayers), dLogprobs, dHidden, full);
    const rank = pass.adapter?.rank ?? 0;
    this.gradientBuffers.ensure(rows, rank);
    for (let layer = config.numLayers - 1; layer >= 0; layer--) {
      const layerWeights = weights.layers[layer]!;
      const acts = this.activations(Math.min(layer, last.kept), rows, rank);
      const outputRows = layer === config.numLayers - 1 ? last.scored : undefined;
      // Recompute this layer's activations from its kept input (bit-identical to the first pass).
      if (layer >= last.kept) this.layer.forward(layer, layerWeights, pass, acts, inputOf(layer), inputOf(layer + 1), outputRows);
      // With frozen embeddings nothing reads the first layer's input gradient.
      const inputGradient = layer > 0 || full !== undefined;
      this.layerBackward.backward({ layer, weights: layerWeights, pass, acts, input: inputOf(layer), dHidden, grads: this.gradientBuffers, gradients, outputRows, inputGradient });
    }
    // dHidden is now dLoss/d(embedding rows) when the embeddings train.
    if (full) this.transformer.kernels.embedBackward(full.matrix(weights.embedTokens), dHidden, last.tokens, config.hiddenSize);
  }

  private activations(index: number, rows: number, rank: number): LayerActivations {
    while (this.layerActivations.length <= index) this.layerActivations.push(new LayerActivations(this.sizes, this.sharedActivations));
    const acts = this.layerActivations[index]!;
    acts.ensure(rows, rank);
    return acts;
  }

  private check(sequence: TrainingSequence, request: ScoreRequest): void {
    const { vocabSize, maxPositionEmbeddings } = this.transformer.config;
    const rows = sequence.length;
    if (!Number.isInteger(rows) || rows < 1) throw new RangeError(`a training sequence needs at least one token, got length ${rows}`);
    for (const [name, array] of [
      ["tokens", sequence.tokens],
      ["inputPos", sequence.inputPos],
      ["groupIds", sequence.groupIds],
      ["parentIds", sequence.parentIds],
    ] as const) {
      if (array.length < rows) throw new RangeError(`${name} has ${array.length} entries, the sequence has ${rows} tokens`);
    }
    if (request.targets.length !== request.mask.length || request.mask.length < rows) throw new RangeError(`targets and mask must have the same length, at least the sequence's ${rows} tokens`);
    for (let p = 0; p < rows; p++) {
      const id = sequence.tokens[p]!;
      if (!(id >= 0 && id < vocabSize)) throw new RangeError(`token id ${id} at position ${p} is outside the model's vocabulary (${vocabSize})`);
      const position = sequence.inputPos[p]!;
      if (!(position >= 0 && position < maxPositionEmbeddings)) throw new RangeError(`position ${position} of token ${p} is outside max_position_embeddings (${maxPositionEmbeddings})`);
    }
  }
}

/** The positions < rows that are scored, ascending; undefined when that is all of them or none. */
function scoredRows(mask: Uint8Array, rows: number): Int32Array | undefined {
  let count = 0;
  for (let p = 0; p < rows; p++) if (mask[p]) count++;
  if (count === rows || count === 0) return undefined;
  const scored = new Int32Array(count);
  for (let p = 0, i = 0; p < rows; p++) if (mask[p]) scored[i++] = p;
  return scored;
}
