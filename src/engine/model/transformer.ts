import type { ModelConfig } from "../checkpoint/model-config.js";
import type { Kernels } from "../kernels/types.js";
import { KvCache } from "./kv-cache.js";
import { ropeInverseFrequencies, RopeTable } from "./rope.js";
import type { ForwardSequence, LinearAdapter, LinearName } from "./types.js";
import type { LayerWeights, Linear, ModelWeights } from "./weights.js";
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
 *   h = embed(tokens)
 *   per layer:  h += o_proj(attention(rope(norm_q(q_proj(n))), rope(norm_k(k_proj(n))), v_proj(n)))  with n = rms_norm(h)
 *               h += down_proj(silu(gate_proj(n)) · up_proj(n))                                          with n = rms_norm(h)
 *   logits = lm_head(rms_norm(h))
 *
 * `forward` runs a batch of sequences together: all their new tokens go through each linear layer
 * as one matrix, attention runs per sequence against its own KV cache.
 */
export class Transformer {
  private readonly rope: RopeTable;
  private readonly workspace: Workspace;
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
    this.workspace = new Workspace({ hidden: config.hiddenSize, queries: this.queryWidth, keyValues: this.kvWidth, intermediate: config.intermediateSize });
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
    for (let layer = 0; layer < this.config.numLayers; layer++) {
      this.attentionBlock(layer, this.weights.layers[layer]!, rows, spans);
      this.mlpBlock(layer, this.weights.layers[layer]!, rows, spans);
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

  private attentionBlock(layer: number, weights: LayerWeights, rows: number, spans: Span[]): void {
    const { kernels, config } = this;
    const ws = this.workspace;
    const { numHeads: heads, numKvHeads: kvHeads, headDim } = config;
    kernels.rmsNorm(ws.normed, ws.hidden, weights.inputNorm, rows, config.rmsNormEps);
    this.linear(ws.queries, ws.normed, rows, weights.q, layer, "q_proj", spans);
    this.linear(ws.keys, ws.normed, rows, weights.k, layer, "k_proj", spans);
    this.linear(ws.values, ws.normed, rows, weights.v, layer, "v_proj", spans);
    if (weights.qNorm && weights.kNorm) {
      kernels.rmsNorm(ws.queries, ws.queries, weights.qNorm, rows * heads, config.rmsNormEps);
      kernels.rmsNorm(ws.keys, ws.keys, weights.kNorm, rows * kvHeads, config.rmsNormEps);
    }
    kernels.rope(ws.queries, rows, heads, headDim, ws.positions, this.rope.cos, this.rope.sin);
    kernels.rope(ws.keys, rows, kvHeads, headDim, ws.positions, this.rope.cos, this.rope.sin);
    const kvWidth = this.kvWidth;
    for (const span of spans) {
      const keys = span.cache.keys[layer]!;
      const values = span.cache.values[layer]!;
      keys.set(ws.keys.subarray(span.start * kvWidth, (span.start + span.rows) * kvWidth), span.position * kvWidth);
      values.set(ws.values.subarray(span.start * kvWidth, (span.start + span.rows) * kvWidth), span.position * kvWidth);
      const queryRows = ws.queries.subarray(span.start * this.queryWidth, (span.start + span.rows) * this.queryWidth);
      const out = ws.attended.subarray(span.start * this.queryWidth, (span.start + span.rows) * this.queryWidth);
      kernels.attention(out, queryRows, span.rows, keys, values, span.position, { heads, kvHeads, headDim });
    }
    this.linear(ws.projected, ws.attended, rows, weights.o, layer, "o_proj", spans);
    kernels.addInPlace(ws.hidden, ws.projected, rows * config.hiddenSize);
  }

  private mlpBlock(layer: number, weights: LayerWeights, rows: number, spans: Span[]): void {
    const { kernels, config } = this;
    const ws = this.workspace;
    kernels.rmsNorm(ws.normed, ws.hidden, weights.postAttentionNorm, rows, config.rmsNormEps);
    this.linear(ws.gate, ws.normed, rows, weights.gate, layer, "gate_proj", spans);
    this.linear(ws.up, ws.normed, rows, weights.up, layer, "up_proj", spans);
    kernels.siluMul(ws.gate, ws.gate, ws.up, rows * config.intermediateSize);
    this.linear(ws.projected, ws.gate, rows, weights.down, layer, "down_proj", spans);
    kernels.addInPlace(ws.hidden, ws.projected, rows * config.hiddenSize);
  }

  /** The base layer for every row at once, then each sequence's adapter on its own rows. */
  private linear(out: Float32Array, x: Float32Array, rows: number, linear: Linear, layer: number, name: LinearName, spans: Span[]): void {
    this.kernels.matmul(out, x, rows, linear.weight, linear.bias);
    const { rows: outDim, cols: inDim } = linear.weight;
    for (const span of spans) {
      if (!span.adapter) continue;
      const input = x.subarray(span.start * inDim, (span.start + span.rows) * inDim);
      span.adapter.apply(layer, name, input, out.subarray(span.start * outDim, (span.start + span.rows) * outDim), span.rows, this.kernels);
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
