import type { AttentionShape, WeightMatrix } from "../../kernels/types.js";

/**
 * The numeric kernels only the backward pass needs, beside the forward `Kernels` (which the
 * trainer's forward reuses, so trained and served logprobs come from the same arithmetic). Like
 * `Kernels`, everything is synchronous on caller-owned row-major f32 buffers. A backend pairs with
 * one forward backend: `linearBackward` reads that backend's `WeightMatrix` handles. The LoRA
 * products (`Kernels.gemm`) are forward kernels: the sampler runs them too.
 */
export interface TrainingKernels {
  /** Which backend this is ("ts", "native"), matching the forward `Kernels.name` it pairs with. */
  readonly name: string;

  /**
   * The input gradient of a frozen linear layer y = x Wᵀ: dx[r, i] (+)= Σ_o dy[r, o]·w[o, i] for
   * r < rows, with w [out × in] as `Kernels.matmul` takes it. `accumulate` adds to dx instead of
   * overwriting it.
   */
  linearBackward(dx: Float32Array, dy: Float32Array, rows: number, w: WeightMatrix, accumulate: boolean): void;

  /**
   * The weight gradients of a linear layer y = x Wᵀ + b (full-parameter training), W [outDim × inDim]:
   * dWeight[o, i] += Σ_r dy[r, o]·x[r, i] and, when given, dBias[o] += Σ_r dy[r, o], over r < rows.
   * Always accumulates (a step's rows add up).
   */
  linearWeightBackward(dWeight: Float32Array, dBias: Float32Array | undefined, dy: Float32Array, x: Float32Array, rows: number, outDim: number, inDim: number): void;

  /** Backward of `Kernels.embed`: dTable[ids[r], :] += dOut[r, :] for r < ids.length (rows of width `dim`). */
  embedBackward(dTable: Float32Array, dOut: Float32Array, ids: ArrayLike<number>, dim: number): void;

  /**
   * The f32 values of a weight matrix of the paired forward backend, row-major: full-parameter
   * training updates them in place, and the forward computes with them after `syncWeights()`.
   */
  weightValues(w: WeightMatrix): Float32Array;

  /** Makes the forward compute with what was written through `weightValues` (after an optimizer step). */
  syncWeights(): void;

  /**
   * Backward of `Kernels.rmsNorm` (out = x / rms(x) · weight) over `rows` vectors of size
   * weight.length: dx (+)= ∂out/∂x ᵀ dy, recomputing rms from x. With `dWeight` (full-parameter
   * training), the weight's gradient is added to it too: dWeight[i] += Σ_r dy[r, i]·x[r, i]·rms_r⁻¹.
   */
  rmsNormBackward(dx: Float32Array, dy: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number, accumulate: boolean, dWeight?: Float32Array): void;

  /** Backward of `Kernels.rope`, in place on the gradient: each pair rotates back by its angle. */
  ropeBackward(dx: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void;

  /** Backward of `Kernels.siluMul` (out = silu(gate)·up): writes dGate and dUp from dOut. */
  siluMulBackward(dGate: Float32Array, dUp: Float32Array, dOut: Float32Array, gate: Float32Array, up: Float32Array, length: number): void;

  /**
   * Backward of `Kernels.attention` with the same layout (query r at position start + r sees
   * positions 0..start+r): writes dq [rows × heads × headDim] and adds into dKeys / dValues
   * [(start + rows) × kvHeads × headDim]. The softmax is recomputed from q and keys, so nothing
   * of quadratic size is kept between forward and backward.
   */
  attentionBackward(
    dq: Float32Array,
    dKeys: Float32Array,
    dValues: Float32Array,
    dOut: Float32Array,
    q: Float32Array,
    keys: Float32Array,
    values: Float32Array,
    rows: number,
    start: number,
    shape: AttentionShape,
  ): void;
}
