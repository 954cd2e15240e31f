import type { FloatDType } from "../checkpoint/dtype.js";

/**
 * The numeric kernels the transformer is built from, forward and backward: inference runs the
 * forward ones, training runs the same forward (so trained and sampled logprobs come from the same
 * arithmetic) and then the backward ones. Two backends implement all of it: the plain TypeScript
 * reference in `ts/` (always available) and a native addon (SIMD, threads). Everything is
 * synchronous and works on caller-owned f32 buffers, row-major; models run off the event loop (in
 * worker threads), so a kernel may block for as long as it computes.
 *
 * Weights live behind `WeightMatrix` so a backend chooses their storage: the TS reference widens
 * f16/bf16 to f32 at load, a native backend may keep them as stored and convert inside its matmul.
 * Kernels with more than a handful of operands take one argument object, named after the operation.
 */
export interface Kernels {
  /** "ts" or "native": which backend this is (shown in logs and benchmarks). */
  readonly name: string;

  /**
   * What `matmul` multiplies in (FLYWHEEL_FORWARD_PRECISION): "f32", or "bf16" (x and the weight
   * rounded to bf16, nearest even, the sums kept in f32 or wider). The sampler and the trainer run
   * the same forward, so either way their logprobs agree bit for bit.
   */
  readonly forwardPrecision: ProductPrecision;

  /**
   * What `linearBackward` and `linearWeightBackward` multiply in (FLYWHEEL_BACKWARD_PRECISION), as
   * `forwardPrecision`. Every kernel other than these and `matmul` computes in f32 either way.
   */
  readonly backwardPrecision: ProductPrecision;

  // Weights ----------------------------------------------------------------------------------

  /** Takes a [rows × cols] weight (rows = output features, like `nn.Linear.weight`) as stored in the checkpoint. */
  createMatrix(rows: number, cols: number, dtype: FloatDType, data: Uint8Array): WeightMatrix;

  /**
   * The f32 values of a weight matrix, row-major: full-parameter training updates them in place,
   * and the kernels compute with them after `syncWeights()`.
   */
  weightValues(w: WeightMatrix): Float32Array;

  /** Makes every kernel compute with what was written through `weightValues` (after an optimizer step). */
  syncWeights(): void;

  // Linear layers (ts/linear.ts, ts/gemm.ts) ----------------------------------------------------

  /** A linear layer on `rows` vectors: out[r, o] = Σ_i x[r, i]·w[o, i] (+ bias[o]). `out` must not alias `x`. */
  matmul(out: Float32Array, x: Float32Array, rows: number, w: WeightMatrix, bias?: Float32Array): void;

  /** The input gradient of `matmul`: dx[r, i] (+)= Σ_o dy[r, o]·w[o, i] for r < rows. */
  linearBackward(args: LinearBackwardArgs): void;

  /**
   * The weight gradients of `matmul` (full-parameter training), W [outDim × inDim]:
   * dWeight[o, i] += Σ_r dy[r, o]·x[r, i] and, when given, dBias[o] += Σ_r dy[r, o]. Always
   * accumulates (a step's rows add up).
   */
  linearWeightBackward(args: LinearWeightBackwardArgs): void;

  /**
   * c (+)= alpha · op(a)·op(b) on plain f32 matrices, c [m × n], op(a) [m × k], op(b) [k × n]; op
   * transposes when asked (a stored [k × m], b stored [n × k]). The LoRA factors' small products,
   * forward and backward (their A and B gradients are products of this kind too). Each output is
   * summed over k in one fixed order whatever m, so a row gets the same result alone or in a batch
   * (the sampler and the trainer agree bit for bit).
   */
  gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, options?: GemmOptions): void;

  // Embedding (ts/embedding.ts) ----------------------------------------------------------------

  /** Embedding lookup: out[r, :] = table[ids[r], :] for r < ids.length. */
  embed(out: Float32Array, table: WeightMatrix, ids: ArrayLike<number>): void;

  /** Backward of `embed`: dTable[ids[r], :] += dOut[r, :] for r < ids.length (rows of width `dim`). */
  embedBackward(dTable: Float32Array, dOut: Float32Array, ids: ArrayLike<number>, dim: number): void;

  // RMSNorm (ts/rms-norm.ts) -------------------------------------------------------------------

  /**
   * RMSNorm of `rows` vectors of size `weight.length`: out = x / sqrt(mean(x²) + eps) · weight.
   * `out` may be `x`.
   */
  rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void;

  /**
   * Backward of `rmsNorm`: dx (+)= ∂out/∂xᵀ dy, recomputing rms from x. With `dWeight`
   * (full-parameter training), the weight's gradient is added to it too.
   */
  rmsNormBackward(args: RmsNormBackwardArgs): void;

  // Rotary embedding (ts/rope.ts) ----------------------------------------------------------------

  /**
   * Rotary embedding in place, Hugging Face "rotate_half" layout: in each head vector, element i
   * pairs with i + headDim/2 and both rotate by the angle of frequency i at the row's position.
   */
  rope(args: RopeArgs): void;

  /** Backward of `rope`, in place on the gradient: each pair rotates back by its angle. */
  ropeBackward(args: RopeArgs): void;

  // Attention (ts/attention.ts) ------------------------------------------------------------------

  /**
   * Causal grouped-query attention of `rows` new queries whose first is at position `start`:
   * query r attends to positions 0..start+r. Query head h reads kv head ⌊h / (heads/kvHeads)⌋.
   */
  attention(args: AttentionArgs): void;

  /**
   * Backward of `attention` with the same layout: writes dq and adds into dKeys / dValues. The
   * softmax is recomputed from q and keys, so nothing of quadratic size is kept between forward
   * and backward.
   */
  attentionBackward(args: AttentionBackwardArgs): void;

  // SwiGLU (ts/silu-mul.ts) ------------------------------------------------------------------------

  /** SwiGLU's gate: out[i] = silu(gate[i]) · up[i] for i < length. `out` may be `gate`. */
  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void;

  /** Backward of `siluMul`: writes dGate and dUp from dOut. */
  siluMulBackward(args: SiluMulBackwardArgs): void;

  /** Residual add: x[i] += y[i] for i < length (its backward is the identity). */
  addInPlace(x: Float32Array, y: Float32Array, length: number): void;

  // Log-softmax over the vocabulary (ts/token-logprobs.ts) -----------------------------------------

  /**
   * Per row of `logits` [rows × vocab]: the log normalizer log Σ exp, the logprob of the row's
   * target and the entropy. Callers pass a chunk of rows at a time, so no [tokens × vocab] matrix
   * is ever needed. Summed exactly as the sampler sums its normalizer (`sampling/fast-math.ts`),
   * so the trainer's logprobs equal the sampler's bit for bit.
   */
  tokenLogprobs(args: TokenLogprobsArgs): void;

  /**
   * Backward of `tokenLogprobs` for the logprob outputs, in place: each row of `logits` becomes
   * dℓ/dlogits = g·(onehot(target) − softmax), with g the row's gradient.
   */
  tokenLogprobsBackward(args: TokenLogprobsBackwardArgs): void;

  // Optimizer (ts/adamw.ts, ts/grad-norm.ts) --------------------------------------------------------

  /**
   * One AdamW update of a tensor, as `torch.optim.AdamW` computes it (decoupled weight decay, bias
   * corrected moments; the math in doubles, stored as f32). Returns the number of updated weights
   * that are not finite: the caller must then discard the tensor, which is partly updated.
   */
  adamwStep(args: AdamWStepArgs): number;

  /** Σ x[i]² in double precision (for the global gradient norm). */
  sumOfSquares(x: Float32Array): number;

  /** x[i] *= factor for every i (gradient clipping). */
  scale(x: Float32Array, factor: number): void;
}

export interface GemmOptions {
  transposeA?: boolean;
  transposeB?: boolean;
  /** Default 1. */
  alpha?: number;
  /** Add to c instead of overwriting it. */
  accumulate?: boolean;
}

/** A weight matrix owned by a kernel backend; only that backend's kernels accept it. */
export interface WeightMatrix {
  readonly rows: number;
  readonly cols: number;
  /** The precision the backend keeps it in. */
  readonly dtype: "f32" | "f16" | "bf16";
}

export interface AttentionShape {
  heads: number;
  kvHeads: number;
  headDim: number;
}

/** What a kernel's matrix products multiply in: f32, or operands rounded to bf16 with f32 sums. */
export type ProductPrecision = "f32" | "bf16";

export interface LinearBackwardArgs {
  /** [rows × w.cols] */
  dx: Float32Array;
  /** [rows × w.rows] */
  dy: Float32Array;
  rows: number;
  /** The layer's weight [out × in], as `matmul` takes it. */
  w: WeightMatrix;
  /** Add to dx instead of overwriting it. */
  accumulate?: boolean;
}

export interface LinearWeightBackwardArgs {
  /** [outDim × inDim], added to. */
  dWeight: Float32Array;
  /** [outDim], added to when given. */
  dBias?: Float32Array;
  /** [rows × outDim] */
  dy: Float32Array;
  /** The layer's input [rows × inDim]. */
  x: Float32Array;
  rows: number;
  outDim: number;
  inDim: number;
}

export interface RmsNormBackwardArgs {
  /** [rows × dim], written (or added to with `accumulate`). */
  dx: Float32Array;
  dy: Float32Array;
  /** The forward's input. */
  x: Float32Array;
  weight: Float32Array;
  rows: number;
  eps: number;
  accumulate?: boolean;
  /** [dim]: dWeight[i] += Σ_r dy[r, i]·x[r, i]·rms_r⁻¹ when given. */
  dWeight?: Float32Array;
}

export interface RopeArgs {
  /** [rows × heads × headDim], rotated in place (the gradient, for the backward). */
  x: Float32Array;
  rows: number;
  heads: number;
  headDim: number;
  /** The position of each row. */
  positions: Int32Array;
  /** [position × headDim/2] tables. */
  cos: Float32Array;
  sin: Float32Array;
}

export interface AttentionArgs {
  /** [rows × heads × headDim] */
  out: Float32Array;
  /** [rows × heads × headDim] */
  q: Float32Array;
  rows: number;
  /** One layer of a KV cache, [position × kvHeads × headDim], already holding the new rows. */
  keys: Float32Array;
  values: Float32Array;
  /** The position of the first query row. */
  start: number;
  shape: AttentionShape;
}

export interface AttentionBackwardArgs {
  /** [rows × heads × headDim], written. */
  dq: Float32Array;
  /** [(start + rows) × kvHeads × headDim], added to. */
  dKeys: Float32Array;
  dValues: Float32Array;
  dOut: Float32Array;
  q: Float32Array;
  keys: Float32Array;
  values: Float32Array;
  rows: number;
  start: number;
  shape: AttentionShape;
}

export interface SiluMulBackwardArgs {
  dGate: Float32Array;
  dUp: Float32Array;
  dOut: Float32Array;
  gate: Float32Array;
  up: Float32Array;
  length: number;
}

export interface TokenLogprobsArgs {
  /** [rows × vocab] */
  logits: Float32Array;
  rows: number;
  vocab: number;
  /** The target token of each row. */
  targets: Int32Array;
  /** Out, per row: log Σ_j exp(logits[r, j]). */
  normalizers: Float64Array;
  /** Out, per row: logits[r, target] − normalizer. */
  logprobs: Float64Array;
  /** Out, per row: the softmax's entropy. */
  entropies: Float64Array;
}

export interface TokenLogprobsBackwardArgs {
  /** [rows × vocab]: the logits on entry, their gradient on return. */
  logits: Float32Array;
  rows: number;
  vocab: number;
  targets: Int32Array;
  /** From `tokenLogprobs`. */
  normalizers: Float64Array;
  /** dLoss/dℓ of each row. */
  gradients: Float64Array;
}

export interface AdamWStepArgs {
  /** The tensor, updated in place. */
  params: Float32Array;
  grads: Float32Array;
  /** The moments, updated in place. */
  expAvg: Float32Array;
  expAvgSq: Float32Array;
  lr: number;
  /** The step number after this update (1 for the first): the bias-correction exponent. */
  step: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}
