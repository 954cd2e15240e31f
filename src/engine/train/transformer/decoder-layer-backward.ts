import type { ModelConfig } from "../../checkpoint/model-config.js";
import type { Kernels } from "../../kernels/types.js";
import type { LoraAdapter } from "../../lora/adapter.js";
import { compactedPass, type LayerPass } from "../../model/decoder-layer.js";
import type { LayerActivations } from "../../model/layer-activations.js";
import type { RopeTable } from "../../model/rope.js";
import { compactRows, expandRows } from "../../model/selected-rows.js";
import { LINEAR_NAMES, type LinearName } from "../../model/types.js";
import type { LayerWeights, Linear } from "../../model/weights.js";
import type { GradientBuffers } from "./activations.js";
import { ModelGradients, type ParameterGradients } from "./model-gradients.js";
import type { PackedAttention } from "./packed-attention.js";
import type { AttentionSpan } from "./sequence.js";

/** A training pass as the shared forward (`DecoderLayer`) takes it, plus its attention spans and single adapter. */
export interface PassLayout extends LayerPass {
  spans: readonly AttentionSpan[];
  adapter: LoraAdapter | null;
}

/** One layer's backward: its forward's inputs and activations, and where the gradients go. */
export interface LayerBackwardArgs {
  layer: number;
  weights: LayerWeights;
  pass: PassLayout;
  /** What the forward kept. */
  acts: LayerActivations;
  /** The layer's input hidden states. */
  input: Float32Array;
  /** dLoss/d(output) on entry, dLoss/d(input) on return (unless `inputGradient` is false). */
  dHidden: Float32Array;
  /**
   * Whether dLoss/d(input) is wanted; default true. False for the first layer when the embeddings
   * are frozen (LoRA): q, k and v then skip their input gradients, and the input norm its backward,
   * and `dHidden` is left holding only the MLP half's part.
   */
  inputGradient?: boolean;
  /** Scratch for the intermediate gradients. */
  grads: GradientBuffers;
  /** Where parameter gradients are added: the adapter's factors, or every weight (full-parameter). */
  gradients: ParameterGradients;
  /**
   * The rows the forward took past attention (`DecoderLayer.forward`'s `outputRows`), if it took
   * only some: dHidden must then be zero at every other row, as it is at a last layer's unscored rows.
   */
  outputRows?: Int32Array;
}

/** One linear layer inside a layer's backward: y = x Wᵀ (+ b), plus its adapter when it has one. */
interface LinearBackwardStep {
  /** Written, or added to with `accumulate`; null when the input's gradient is not wanted. */
  dx: Float32Array | null;
  dy: Float32Array;
  x: Float32Array;
  linear: Linear;
  name: LinearName;
  accumulate: boolean;
}

/**
 * The backward of one decoder layer (`DecoderLayer`, whose forward filled `LayerActivations`):
 *
 *   n = rms_norm(x); q, k, v = linear(n); q, k = rope(q/k norm(q, k)); a = attention(q, k, v)
 *   m = x + o_proj(a);  n' = rms_norm(m);  out = m + down(silu(gate(n'))·up(n'))
 *
 * walked in reverse. Linear layers pass the gradient to their input
 * (dY·W); with LoRA gradients the base weights are frozen and the factors' gradients are added,
 * with `ModelGradients` (full-parameter training) every weight, bias and norm weight gets its own.
 */
export class DecoderLayerBackward {
  private readonly kvWidth: number;

  constructor(
    private readonly config: ModelConfig,
    private readonly kernels: Kernels,
    private readonly rope: RopeTable,
    private readonly attention: PackedAttention,
  ) {
    this.kvWidth = config.numKvHeads * config.headDim;
  }

  /** Walks the layer back: dHidden becomes dLoss/d(input); parameter gradients are added into `gradients`. */
  backward(args: LayerBackwardArgs): void {
    const { kernels, config } = this;
    const { weights, pass, acts, input, dHidden, grads, gradients, outputRows, inputGradient = true } = args;
    const { rows, positions } = pass;
    const hidden = config.hiddenSize;
    const { numHeads: heads, numKvHeads: kvHeads, headDim } = config;
    const { cos, sin } = this.rope;
    const eps = config.rmsNormEps;
    // A norm weight's gradient, when the weights themselves train.
    const full = gradients instanceof ModelGradients ? gradients : undefined;
    const normGradient = (weight: Float32Array) => full?.of(weight);
    const linear = (step: LinearBackwardStep) => this.linearBackward(args, step);
    // Past attention the forward ran on `after`'s rows: the output rows, moved to the front.
    const after = outputRows ? compactedPass(pass, outputRows.length) : pass;
    const linearAfter = (step: LinearBackwardStep) => this.linearBackward({ ...args, pass: after }, step);
    if (outputRows) compactRows(dHidden, outputRows, hidden);

    // MLP half: out = m + down(silu(g)·u); silu(g)·u recomputed, its buffer being shared by the layers.
    const mlpWidth = after.rows * config.intermediateSize;
    kernels.siluMul(acts.activated, acts.gate, acts.up, mlpWidth);
    linearAfter({ dx: grads.activated, dy: dHidden, x: acts.activated, linear: weights.down, name: "down_proj", accumulate: false });
    kernels.siluMulBackward({ dGate: grads.gate, dUp: grads.up, dOut: grads.activated, gate: acts.gate, up: acts.up, length: mlpWidth });
    linearAfter({ dx: grads.normed, dy: grads.gate, x: acts.normedMlp, linear: weights.gate, name: "gate_proj", accumulate: false });
    linearAfter({ dx: grads.normed, dy: grads.up, x: acts.normedMlp, linear: weights.up, name: "up_proj", accumulate: true });
    const postNorm = weights.postAttentionNorm;
    kernels.rmsNormBackward({ dx: dHidden, dy: grads.normed, x: acts.hiddenMid, weight: postNorm, rows: after.rows, eps, accumulate: true, dWeight: normGradient(postNorm) });

    // Attention half: m = x + o_proj(attention(...)).
    linearAfter({ dx: grads.attended, dy: dHidden, x: acts.attended, linear: weights.o, name: "o_proj", accumulate: false });
    if (outputRows) {
      // Back to every row: dLoss/dm and dLoss/d(attention output) are zero where the forward stopped.
      expandRows(dHidden, outputRows, hidden, rows);
      expandRows(grads.attended, outputRows, heads * headDim, rows);
    }
    grads.keysRoped.fill(0, 0, rows * this.kvWidth);
    grads.values.fill(0, 0, rows * this.kvWidth);
    this.attention.backward({
      dq: grads.queriesRoped,
      dKeys: grads.keysRoped,
      dValues: grads.values,
      dOut: grads.attended,
      q: acts.queriesRoped,
      keys: acts.keysRoped,
      values: acts.values,
      spans: pass.spans,
    });
    kernels.ropeBackward({ x: grads.queriesRoped, rows, heads, headDim, positions, cos, sin });
    kernels.ropeBackward({ x: grads.keysRoped, rows, heads: kvHeads, headDim, positions, cos, sin });
    let dQueries = grads.queriesRoped;
    let dKeys = grads.keysRoped;
    if (weights.qNorm && weights.kNorm) {
      kernels.rmsNormBackward({ dx: grads.queries, dy: grads.queriesRoped, x: acts.queries, weight: weights.qNorm, rows: rows * heads, eps, dWeight: normGradient(weights.qNorm) });
      kernels.rmsNormBackward({ dx: grads.keys, dy: grads.keysRoped, x: acts.keys, weight: weights.kNorm, rows: rows * kvHeads, eps, dWeight: normGradient(weights.kNorm) });
      [dQueries, dKeys] = [grads.queries, grads.keys];
    }
    const dNormed = inputGradient ? grads.normed : null;
    linear({ dx: dNormed, dy: dQueries, x: acts.normedAttention, linear: weights.q, name: "q_proj", accumulate: false });
    linear({ dx: dNormed, dy: dKeys, x: acts.normedAttention, linear: weights.k, name: "k_proj", accumulate: true });
    linear({ dx: dNormed, dy: grads.values, x: acts.normedAttention, linear: weights.v, name: "v_proj", accumulate: true });
    if (!inputGradient) return;
    kernels.rmsNormBackward({ dx: dHidden, dy: grads.normed, x: input, weight: weights.inputNorm, rows, eps, accumulate: true, dWeight: normGradient(weights.inputNorm) });
  }

  /**
   * dx (+)= dy·W + dy·(scale·B·A) and, for an adapted layer with t = x Aᵀ:
   * dB += scale·dyᵀ t, dt = scale·dy B, dA += dtᵀ x. Full-parameter: dW += dyᵀ x, db += Σ dy.
   */
  private linearBackward({ layer, pass, acts, grads, gradients }: LayerBackwardArgs, { dx, dy, x, linear, name, accumulate }: LinearBackwardStep): void {
    const { kernels } = this;
    const rows = pass.rows;
    if (dx) kernels.linearBackward({ dx, dy, rows, w: linear.weight, accumulate });
    if (gradients instanceof ModelGradients) {
      const { rows: outDim, cols: inDim } = linear.weight;
      kernels.linearWeightBackward({ dWeight: gradients.matrix(linear.weight), dBias: linear.bias && gradients.of(linear.bias), dy, x, rows, outDim, inDim });
      return;
    }
    const adapter = pass.adapter;
    const module = adapter?.module(layer, name);
    if (!adapter || !module) return;
    const { a, b } = gradients.of(module);
    const rank = adapter.rank;
    const projection = acts.projections[LINEAR_NAMES.indexOf(name)]!;
    const dProjection = grads.projection;
    kernels.gemm(b, dy, projection, module.outDim, rank, rows, { transposeA: true, alpha: adapter.scale, accumulate: true });
    kernels.gemm(dProjection, dy, module.b, rows, rank, module.outDim, { alpha: adapter.scale });
    kernels.gemm(a, dProjection, x, rank, module.inDim, rows, { transposeA: true, accumulate: true });
    if (dx) kernels.gemm(dx, dProjection, module.a, rows, module.inDim, rank, { accumulate: true });
  }
}
