import type { ModelConfig } from "../../checkpoint/model-config.js";
import type { Kernels } from "../../kernels/types.js";
import type { LoraAdapter } from "../../lora/adapter.js";
import { LINEAR_NAMES } from "../../lora/config.js";
import type { RopeTable } from "../../model/rope.js";
import type { LinearName } from "../../model/types.js";
import type { LayerWeights, Linear } from "../../model/weights.js";
import type { TrainingKernels } from "../kernels/types.js";
import type { GradientBuffers, LayerActivations } from "./activations.js";
import { ModelGradients, type ParameterGradients } from "./model-gradients.js";
import type { PackedAttention } from "./packed-attention.js";
import type { AttentionSpan } from "./sequence.js";

/** What every layer of one pass shares: its rows, RoPE positions, attention spans and adapter. */
export interface PassLayout {
  rows: number;
  positions: Int32Array;
  spans: readonly AttentionSpan[];
  adapter: LoraAdapter | null;
}

/**
 * One decoder layer of the trainer, forward and backward, in the step order of
 * `Transformer.attentionBlock` / `mlpBlock` (the same kernels, so the same numbers), keeping
 * what the backward needs in `LayerActivations`:
 *
 *   n = rms_norm(x); q, k, v = linear(n); q, k = rope(q/k norm(q, k)); a = attention(q, k, v)
 *   m = x + o_proj(a);  n' = rms_norm(m);  out = m + down(silu(gate(n'))·up(n'))
 *
 * The backward walks these steps in reverse. Linear layers pass the gradient to their input
 * (dY·W); with LoRA gradients the base weights are frozen and the factors' gradients are added,
 * with `ModelGradients` (full-parameter training) every weight, bias and norm weight gets its own.
 */
export class DecoderLayerPass {
  private readonly queryWidth: number;
  private readonly kvWidth: number;

  constructor(
    private readonly config: ModelConfig,
    private readonly kernels: Kernels,
    private readonly training: TrainingKernels,
    private readonly rope: RopeTable,
    private readonly attention: PackedAttention,
  ) {
    this.queryWidth = config.numHeads * config.headDim;
    this.kvWidth = config.numKvHeads * config.headDim;
  }

  /** Runs layer `layer` on input [rows × hidden] into output, filling `acts`. */
  forward(layer: number, weights: LayerWeights, pass: PassLayout, acts: LayerActivations, input: Float32Array, output: Float32Array): void {
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
      acts.queriesRoped.set(acts.queries.subarray(0, rows * this.queryWidth));
      acts.keysRoped.set(acts.keys.subarray(0, rows * this.kvWidth));
    }
    kernels.rope(acts.queriesRoped, rows, heads, headDim, positions, this.rope.cos, this.rope.sin);
    kernels.rope(acts.keysRoped, rows, kvHeads, headDim, positions, this.rope.cos, this.rope.sin);
    this.attention.forward(acts.attended, acts.queriesRoped, acts.keysRoped, acts.values, pass.spans);
    // m = x + o_proj(a), built in hiddenMid.
    this.linear(acts.hiddenMid, acts.attended, weights.o, layer, "o_proj", pass, acts);
    kernels.addInPlace(acts.hiddenMid, input, rows * config.hiddenSize);

    kernels.rmsNorm(acts.normedMlp, acts.hiddenMid, weights.postAttentionNorm, rows, eps);
    this.linear(acts.gate, acts.normedMlp, weights.gate, layer, "gate_proj", pass, acts);
    this.linear(acts.up, acts.normedMlp, weights.up, layer, "up_proj", pass, acts);
    kernels.siluMul(acts.activated, acts.gate, acts.up, rows * config.intermediateSize);
    this.linear(output, acts.activated, weights.down, layer, "down_proj", pass, acts);
    kernels.addInPlace(output, acts.hiddenMid, rows * config.hiddenSize);
  }

  /**
   * dHidden holds dLoss/d(output) on entry and dLoss/d(input) on return; the parameter gradients
   * (the adapter's factors, or the layer's weights) are added into `gradients`.
   */
  backward(layer: number, weights: LayerWeights, pass: PassLayout, acts: LayerActivations, input: Float32Array, dHidden: Float32Array, grads: GradientBuffers, gradients: ParameterGradients): void {
    const { training, config } = this;
    const { rows, positions } = pass;
    const { numHeads: heads, numKvHeads: kvHeads, headDim } = config;
    const eps = config.rmsNormEps;
    // A norm weight's gradient, when the weights themselves train.
    const full = gradients instanceof ModelGradients ? gradients : undefined;
    const normGradient = (weight: Float32Array) => full?.of(weight);

    // MLP half: out = m + down(silu(g)·u).
    this.linearBackward(grads.activated, dHidden, acts.activated, weights.down, layer, "down_proj", pass, acts, grads, gradients, false);
    training.siluMulBackward(grads.gate, grads.up, grads.activated, acts.gate, acts.up, rows * config.intermediateSize);
    this.linearBackward(grads.normed, grads.gate, acts.normedMlp, weights.gate, layer, "gate_proj", pass, acts, grads, gradients, false);
    this.linearBackward(grads.normed, grads.up, acts.normedMlp, weights.up, layer, "up_proj", pass, acts, grads, gradients, true);
    training.rmsNormBackward(dHidden, grads.normed, acts.hiddenMid, weights.postAttentionNorm, rows, eps, true, normGradient(weights.postAttentionNorm));

    // Attention half: m = x + o_proj(attention(...)).
    this.linearBackward(grads.attended, dHidden, acts.attended, weights.o, layer, "o_proj", pass, acts, grads, gradients, false);
    grads.keysRoped.fill(0, 0, rows * this.kvWidth);
    grads.values.fill(0, 0, rows * this.kvWidth);
    this.attention.backward(grads.queriesRoped, grads.keysRoped, grads.values, grads.attended, acts.queriesRoped, acts.keysRoped, acts.values, pass.spans);
    training.ropeBackward(grads.queriesRoped, rows, heads, headDim, positions, this.rope.cos, this.rope.sin);
    training.ropeBackward(grads.keysRoped, rows, kvHeads, headDim, positions, this.rope.cos, this.rope.sin);
    let dQueries = grads.queriesRoped;
    let dKeys = grads.keysRoped;
    if (weights.qNorm && weights.kNorm) {
      training.rmsNormBackward(grads.queries, grads.queriesRoped, acts.queries, weights.qNorm, rows * heads, eps, false, normGradient(weights.qNorm));
      training.rmsNormBackward(grads.keys, grads.keysRoped, acts.keys, weights.kNorm, rows * kvHeads, eps, false, normGradient(weights.kNorm));
      [dQueries, dKeys] = [grads.queries, grads.keys];
    }
    this.linearBackward(grads.normed, dQueries, acts.normedAttention, weights.q, layer, "q_proj", pass, acts, grads, gradients, false);
    this.linearBackward(grads.normed, dKeys, acts.normedAttention, weights.k, layer, "k_proj", pass, acts, grads, gradients, true);
    this.linearBackward(grads.normed, grads.values, acts.normedAttention, weights.v, layer, "v_proj", pass, acts, grads, gradients, true);
    training.rmsNormBackward(dHidden, grads.normed, input, weights.inputNorm, rows, eps, true, normGradient(weights.inputNorm));
  }

  /** The base layer, then the adapter's delta through its projection t = x Aᵀ (kept for the backward). */
  private linear(out: Float32Array, x: Float32Array, linear: Linear, layer: number, name: LinearName, pass: PassLayout, acts: LayerActivations): void {
    this.kernels.matmul(out, x, pass.rows, linear.weight, linear.bias);
    const module = pass.adapter?.module(layer, name);
    if (!module) return;
    const projection = acts.projections[LINEAR_NAMES.indexOf(name)]!;
    pass.adapter!.project(module, x, pass.rows, projection, this.kernels);
    pass.adapter!.expand(module, projection, pass.rows, out, this.kernels);
  }

  /**
   * dx (+)= dy·W + dy·(scale·B·A) and, for an adapted layer with t = x Aᵀ:
   * dB += scale·dyᵀ t, dt = scale·dy B, dA += dtᵀ x. Full-parameter: dW += dyᵀ x, db += Σ dy.
   */
  private linearBackward(dx: Float32Array, dy: Float32Array, x: Float32Array, linear: Linear, layer: number, name: LinearName, pass: PassLayout, acts: LayerActivations, grads: GradientBuffers, gradients: ParameterGradients, accumulate: boolean): void {
    const { training, kernels } = this;
    const rows = pass.rows;
    training.linearBackward(dx, dy, rows, linear.weight, accumulate);
    if (gradients instanceof ModelGradients) {
      const { rows: outDim, cols: inDim } = linear.weight;
      training.linearWeightBackward(gradients.matrix(linear.weight), linear.bias && gradients.of(linear.bias), dy, x, rows, outDim, inDim);
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
    kernels.gemm(dx, dProjection, module.a, rows, module.inDim, rank, { accumulate: true });
  }
}
