import type { ModelConfig } from "../checkpoint/model-config.js";
import type { Kernels } from "../kernels/types.js";
import { DecoderLayer, type LayerPass } from "./decoder-layer.js";
import { KvCache } from "./kv-cache.js";
import { LayerActivations } from "./layer-activations.js";
import { ropeInverseFrequencies, RopeTable } from "./rope.js";
import type { ForwardSequence, LinearAdapter } from "./types.js";
import type { ModelWeights } from "./weights.js";
import { Workspace } from "./workspace.js";

/** Where one sequence's new tokens sit in the batch's rows. */
interface Span {
  start: number;
  rows: number;
  position: number;
  cache: KvCache;
  adapter: LinearAdapter | undefined;
}

/**
 * The decoder-only transformer of llama, qwen2 and qwen3, in Hugging Face semantics:
 *
 *   h = embed(tokens);  per layer: h = DecoderLayer(h);  logits = lm_head(rms_norm(h))
 *
 * `forward` runs a batch of sequences together: all their new tokens go through each linear layer
 * as one matrix, attention runs per sequence against its own KV cache.
 */
export class Transformer {
  private readonly rope: RopeTable;
  private readonly workspace: Workspace;
  private readonly layer: DecoderLayer;
  private readonly activations: LayerActivations;
  private readonly queryWidth: number;
  private readonly kvWidth: number;

  constructor(
    readonly config: ModelConfig,
    readonly weights: ModelWeights,
    readonly kernels: Kernels,
  ) {
    this.queryWidth = config.numHeads * config.headDim;
    this.kvWidth = config.numKvHeads * config.headDim;
    this.rope = new RopeTable(ropeInverseFrequencies(config), config.maxPositionEmbeddings);
    const sizes = { hidden: config.hiddenSize, queries: this.queryWidth, keyValues: this.kvWidth, intermediate: config.intermediateSize };
    this.workspace = new Workspace(sizes);
    this.activations = new LayerActivations(sizes);
    this.layer = new DecoderLayer(config, kernels, this.rope);
  }

  /** An empty KV cache for one sequence of this model. */
  createCache(initialCapacity?: number): KvCache {
    return new KvCache(this.config.numLayers, this.kvWidth, this.config.maxPositionEmbeddings, initialCapacity);
  }

  /**
   * Runs the new tokens of every sequence, appends their keys and values to the sequences' caches
   * and returns each sequence's logits: [positions × vocab] f32 for the selected positions (one row
   * for "last"), or null for "none".
   */
  forward(batch: readonly ForwardSequence[]): (Float32Array | null)[] {
    const spans = this.plan(batch);
    const rows = spans.reduce((sum, span) => sum + span.rows, 0);
    const ws = this.workspace;
    ws.ensure(rows);
    for (const span of spans) {
      for (let t = 0; t < span.rows; t++) ws.positions[span.start + t] = span.position + t;
    }
    this.rope.ensure(Math.max(...spans.map((span) => span.position + span.rows)));
    this.kernels.embed(ws.hidden, this.weights.embedTokens, concatTokens(batch, rows));
    this.activations.ensure(rows, 0);
    const pass: LayerPass = {
      rows,
      positions: ws.positions,
      adapters: spans,
      attend: (layer, out, queries, keys, values) => this.attend(layer, spans, out, queries, keys, values),
      keepProjections: false,
    };
    for (let layer = 0; layer < this.config.numLayers; layer++) {
      this.layer.forward(layer, this.weights.layers[layer]!, pass, this.activations, ws.hidden, ws.hidden);
    }
    for (const span of spans) span.cache.length = span.position + span.rows;
    return this.logits(batch, spans);
  }

  /** Full-sequence logits of `tokens` from an empty cache: [tokens.length × vocab]. */
  logitsOf(tokens: ArrayLike<number>): Float32Array {
    return this.forward([{ cache: this.createCache(tokens.length), tokens, logits: "all" }])[0]!;
  }

  /** Checks the whole batch before touching any cache, then lays the sequences out as rows. */
  private plan(batch: readonly ForwardSequence[]): Span[] {
    if (batch.length === 0) throw new RangeError("forward needs at least one sequence");
    if (new Set(batch.map((sequence) => sequence.cache)).size !== batch.length) throw new RangeError("two sequences of one batch share a KV cache");
    let start = 0;
    const spans = batch.map((sequence) => {
      const rows = sequence.tokens.length;
      if (rows === 0) throw new RangeError("every sequence of a forward pass needs at least one new token");
      for (let t = 0; t < rows; t++) {
        const id = sequence.tokens[t]!;
        if (!Number.isInteger(id) || id < 0 || id >= this.config.vocabSize) throw new RangeError(`token id ${id} is outside the model's vocabulary (${this.config.vocabSize})`);
      }
      const position = sequence.position ?? sequence.cache.length;
      if (!Number.isInteger(position) || position < 0 || position > sequence.cache.length) {
        throw new RangeError(`position ${position} is not within the cache (${sequence.cache.length} positions)`);
      }
      if (position + rows > this.config.maxPositionEmbeddings) {
        throw new RangeError(`positions up to ${position + rows} exceed max_position_embeddings (${this.config.maxPositionEmbeddings})`);
      }
      const span = { start, rows, position, cache: sequence.cache, adapter: sequence.adapter };
      start += rows;
      return span;
    });
    for (const span of spans) {
      span.cache.truncate(span.position);
      span.cache.reserve(span.position + span.rows);
    }
    return spans;
  }

  /** Appends each sequence's new keys and values to its cache and attends there. */
  private attend(layer: number, spans: readonly Span[], out: Float32Array, queries: Float32Array, keys: Float32Array, values: Float32Array): void {
    const { numHeads: heads, numKvHeads: kvHeads, headDim } = this.config;
    const kvWidth = this.kvWidth;
    const queryWidth = this.queryWidth;
    for (const span of spans) {
      const cachedKeys = span.cache.keys[layer]!;
      const cachedValues = span.cache.values[layer]!;
      cachedKeys.set(keys.subarray(span.start * kvWidth, (span.start + span.rows) * kvWidth), span.position * kvWidth);
      cachedValues.set(values.subarray(span.start * kvWidth, (span.start + span.rows) * kvWidth), span.position * kvWidth);
      const queryRows = queries.subarray(span.start * queryWidth, (span.start + span.rows) * queryWidth);
      this.kernels.attention({
        out: out.subarray(span.start * queryWidth, (span.start + span.rows) * queryWidth),
        q: queryRows,
        rows: span.rows,
        keys: cachedKeys,
        values: cachedValues,
        start: span.position,
        shape: { heads, kvHeads, headDim },
      });
    }
  }

  /** Final norm and lm_head on just the rows whose logits were asked for. */
  private logits(batch: readonly ForwardSequence[], spans: Span[]): (Float32Array | null)[] {
    const hidden = this.config.hiddenSize;
    const vocab = this.config.vocabSize;
    const selected: number[] = [];
    const counts = batch.map((sequence, i) => {
      const span = spans[i]!;
      const selection = sequence.logits ?? "last";
      if (selection === "none") return 0;
      const first = selection === "all" ? span.start : span.start + span.rows - 1;
      for (let row = first; row < span.start + span.rows; row++) selected.push(row);
      return span.start + span.rows - first;
    });
    if (selected.length === 0) return batch.map(() => null);
    const ws = this.workspace;
    // Gather the selected rows of the residual stream, then normalize them in place.
    for (const [i, row] of selected.entries()) ws.normed.set(ws.hidden.subarray(row * hidden, (row + 1) * hidden), i * hidden);
    this.kernels.rmsNorm(ws.normed, ws.normed, this.weights.finalNorm, selected.length, this.config.rmsNormEps);
    const logits = new Float32Array(selected.length * vocab);
    this.kernels.matmul(logits, ws.normed, selected.length, this.weights.lmHead);
    let offset = 0;
    return counts.map((count) => {
      if (count === 0) return null;
      const part = logits.subarray(offset * vocab, (offset + count) * vocab);
      offset += count;
      return part;
    });
  }
}

function concatTokens(batch: readonly ForwardSequence[], rows: number): Int32Array {
  const ids = new Int32Array(rows);
  let row = 0;
  for (const sequence of batch) {
    for (let t = 0; t < sequence.tokens.length; t++) ids[row++] = sequence.tokens[t]!;
  }
  return ids;
}
