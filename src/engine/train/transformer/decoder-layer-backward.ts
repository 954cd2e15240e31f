import type { ModelConfig } from "../../checkpoint/model-config.js";
import type { Kernels } from "../../kernels/types.js";
import type { LoraAdapter } from "../../lora/adapter.js";
import type { LayerPass } from "../../model/decoder-layer.js";
import type { LayerActivations } from "../../model/layer-activations.js";
import type { RopeTable } from "../../model/rope.js";
import { LINEAR_NAMES, type LinearName } from "../../model/types.js";
import type { LayerWeights, Linear } from "../../model/weights.js";
import type { TrainingKernels } from "../kernels/types.js";
import type { GradientBuffers } from "./activations.js";
import { ModelGradients, type ParameterGradients } from "./model-gradients.js";
import type { PackedAttention } from "./packed-attention.js";
import type { AttentionSpan } from "./sequence.js";

/** A training pass as the shared forward (`DecoderLayer`) takes it, plus its attention spans and single adapter. */
export interface PassLayout extends LayerPass {
  spans: readonly AttentionSpan[];
  adapter: LoraAdapter | null;
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
