import type { ModelConfig } from "../checkpoint/model-config.js";
import type { Kernels } from "../kernels/types.js";
import type { LayerActivations } from "./layer-activations.js";
import type { RopeTable } from "./rope.js";
import { compactRows } from "./selected-rows.js";
import { LINEAR_NAMES, type LinearAdapter, type LinearName } from "./types.js";
import type { LayerWeights, Linear } from "./weights.js";

/** Rows of a pass that share one adapter (none: the base weights). */
export interface AdapterSpan {
  start: number;
  rows: number;
  adapter: LinearAdapter | undefined;
}

/** What one forward pass hands every layer: its rows, where attention looks, which adapters apply. */
export interface LayerPass {
  rows: number;
  /** RoPE position of each row. */
  positions: Int32Array;
  adapters: readonly AdapterSpan[];
  /**
   * Attention of the rows' roped queries [rows × heads × headDim] over keys and values
   * [rows × kvHeads × headDim] into `out`: inference writes them to the sequences' KV caches and
   * attends there, the trainer attends over packed spans laid out the same way.
   */
  attend(layer: number, out: Float32Array, queries: Float32Array, keys: Float32Array, values: Float32Array): void;
  /** Keep each adapted layer's x Aᵀ in `LayerActivations.projections` (the trainer's backward reads them). */
  keepProjections: boolean;
}

/**
 * One decoder layer of llama, qwen2 and qwen3, in Hugging Face semantics; the only forward there
 * is, run by inference and by the trainer (which then keeps the activations for its backward):
 *
 *   n = rms_norm(x); q, k, v = linear(n); q, k = rope(q/k norm(q, k)); a = attention(q, k, v)
 *   m = x + o_proj(a);  n' = rms_norm(m);  out = m + down(silu(gate(n'))·up(n'))
 */
export class DecoderLayer {
  constructor(
    private readonly config: ModelConfig,
    private readonly kernels: Kernels,
    private readonly rope: RopeTable,
  ) {}

  /**
   * Runs layer `layer` on input [rows × hidden] into `output` (which may be `input`), filling `acts`.
   * With `outputRows` (ascending row indices), every row still feeds attention as key and value,
   * but only those rows go on past it: `output` gets their results in its first
   * `outputRows.length` rows. A last layer needs no more where only some positions are scored
   * (the trainer's forward, with or without backward); each row's values are the bits the whole
   * layer gives it, every step after attention being per row.
   */
  forward(layer: number, weights: LayerWeights, pass: LayerPass, acts: LayerActivations, input: Float32Array, output: Float32Array, outputRows?: Int32Array): void {
    const { kernels, config } = this;
    const { rows, positions } = pass;
    const { numHeads: heads, numKvHeads: kvHeads, headDim } = config;
    const eps = config.rmsNormEps;
    kernels.rmsNorm(acts.normedAttention, input, weights.inputNorm, rows, eps);
    this.linear(acts.queries, acts.normedAttention, weights.q, layer, "q_proj", pass, acts);
    this.linear(acts.keys, acts.normedAttention, weights.k, layer, "k_proj", pass, acts);
    this.linear(acts.values, acts.normedAttention, weights.v, layer, "v_proj", pass, acts);
    if (weights.qNorm && weights.kNorm) {
      kernels.rmsNorm(acts.queriesRoped, acts.queries, weights.qNorm, rows * heads, eps);
      kernels.rmsNorm(acts.keysRoped, acts.keys, weights.kNorm, rows * kvHeads, eps);
    } else {
      acts.queriesRoped.set(acts.queries.subarray(0, rows * heads * headDim));
      acts.keysRoped.set(acts.keys.subarray(0, rows * kvHeads * headDim));
    }
    const { cos, sin } = this.rope;
    kernels.rope({ x: acts.queriesRoped, rows, heads, headDim, positions, cos, sin });
    kernels.rope({ x: acts.keysRoped, rows, heads: kvHeads, headDim, positions, cos, sin });
    pass.attend(layer, acts.attended, acts.queriesRoped, acts.keysRoped, acts.values);
    // Past attention: all rows, or only `outputRows`, moved to the front of their buffers.
    const after = outputRows ? compactedPass(pass, outputRows.length) : pass;
    if (outputRows) {
      compactRows(acts.attended, outputRows, heads * headDim);
      compactRows(output, outputRows, config.hiddenSize, input);
    }
    const residual = outputRows ? output : input;
    // m = x + o_proj(a), built in hiddenMid.
    this.linear(acts.hiddenMid, acts.attended, weights.o, layer, "o_proj", after, acts);
    kernels.addInPlace(acts.hiddenMid, residual, after.rows * config.hiddenSize);

    kernels.rmsNorm(acts.normedMlp, acts.hiddenMid, weights.postAttentionNorm, after.rows, eps);
    this.linear(acts.gate, acts.normedMlp, weights.gate, layer, "gate_proj", after, acts);
    this.linear(acts.up, acts.normedMlp, weights.up, layer, "up_proj", after, acts);
    kernels.siluMul(acts.activated, acts.gate, acts.up, after.rows * config.intermediateSize);
    this.linear(output, acts.activated, weights.down, layer, "down_proj", after, acts);
    kernels.addInPlace(output, acts.hiddenMid, after.rows * config.hiddenSize);
  }

  /** The base layer for every row at once, then each span's adapter on its own rows. */
  private linear(out: Float32Array, x: Float32Array, linear: Linear, layer: number, name: LinearName, pass: LayerPass, acts: LayerActivations): void {
    this.kernels.matmul(out, x, pass.rows, linear.weight, linear.bias);
    const { rows: outDim, cols: inDim } = linear.weight;
    // Kept projections are laid out for one span starting at row 0 (the trainer's single adapter).
    const keep = pass.keepProjections ? acts.projections[LINEAR_NAMES.indexOf(name)] : undefined;
    if (keep && pass.adapters.some((span) => span.start !== 0)) throw new Error("projections are kept for a pass with a single adapter span only");
    for (const span of pass.adapters) {
      if (!span.adapter) continue;
      const input = x.subarray(span.start * inDim, (span.start + span.rows) * inDim);
      span.adapter.apply(layer, name, input, out.subarray(span.start * outDim, (span.start + span.rows) * outDim), span.rows, this.kernels, keep);
    }
  }
}

/**
 * The pass over the first `rows` rows, for a pass with one adapter span over all of its rows (the
 * trainer's): what the steps past attention run on with `outputRows`, forward and backward. Its
 * positions stay the whole pass's: nothing past attention reads them.
 */
export function compactedPass<Pass extends LayerPass>(pass: Pass, rows: number): Pass {
  const [span, ...others] = pass.adapters;
  if (others.length > 0 || (span && (span.start !== 0 || span.rows !== pass.rows))) throw new Error("output rows need a pass with one adapter span over all of its rows");
  return { ...pass, rows, adapters: span ? [{ ...span, rows }] : [] };
}
