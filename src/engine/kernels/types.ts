import type { FloatDType } from "../checkpoint/dtype.js";

/**
 * The numeric kernels the transformer forward is built from. Two backends implement it: the plain
 * TypeScript reference in `ts/` (always available) and a native addon (SIMD, threads). Everything
 * is synchronous and works on caller-owned f32 buffers, row-major; the model runs off the event
 * loop (in a worker thread), so a kernel may block for as long as it computes.
 *
 * Weights live behind `WeightMatrix` so a backend chooses their storage: the TS reference widens
 * f16/bf16 to f32 at load, a native backend may keep them as stored and convert inside its matmul.
 */
export interface Kernels {
  /** "ts" or "native": which backend this is (shown in logs and benchmarks). */
  readonly name: string;

  /** Takes a [rows × cols] weight (rows = output features, like `nn.Linear.weight`) as stored in the checkpoint. */
  createMatrix(rows: number, cols: number, dtype: FloatDType, data: Uint8Array): WeightMatrix;

  /** Embedding lookup: out[r, :] = table[ids[r], :] for r < ids.length. */
  embed(out: Float32Array, table: WeightMatrix, ids: ArrayLike<number>): void;

  /** A linear layer on `rows` vectors: out[r, o] = Σ_i x[r, i]·w[o, i] (+ bias[o]). `out` must not alias `x`. */
  matmul(out: Float32Array, x: Float32Array, rows: number, w: WeightMatrix, bias?: Float32Array): void;

  /**
   * RMSNorm of `rows` vectors of size `weight.length`: out = x / sqrt(mean(x²) + eps) · weight.
   * `out` may be `x`.
   */
  rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void;

  /**
   * Rotary embedding in place, Hugging Face "rotate_half" layout: in each head vector, element i
   * pairs with i + headDim/2 and both rotate by the angle of frequency i at the row's position.
   * `x` is [rows × heads × headDim]; `cos`/`sin` are [position × headDim/2] tables.
   */
  rope(x: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void;

  /**
   * Causal grouped-query attention of `rows` new queries whose first is at position `start`:
   * query r attends to cached positions 0..start+r. `q`/`out` are [rows × heads × headDim];
   * `keys`/`values` are one layer of a KV cache, [position × kvHeads × headDim], already holding
   * the new rows' keys and values. Query head h reads kv head ⌊h / (heads/kvHeads)⌋.
   */
  attention(out: Float32Array, q: Float32Array, rows: number, keys: Float32Array, values: Float32Array, start: number, shape: AttentionShape): void;

  /** SwiGLU's gate: out[i] = silu(gate[i]) · up[i] for i < length. `out` may be `gate`. */
  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void;

  /** Residual add: x[i] += y[i] for i < length. */
  addInPlace(x: Float32Array, y: Float32Array, length: number): void;

  /**
   * c (+)= alpha · op(a)·op(b) on plain f32 matrices, c [m × n], op(a) [m × k], op(b) [k × n]; op
   * transposes when asked (a stored [k × m], b stored [n × k]). The LoRA factors' small products,
   * forward and backward. Each output is summed over k in one fixed order whatever m, so a row gets
   * the same result alone or in a batch (the sampler and the trainer agree bit for bit).
   */
  gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, options?: GemmOptions): void;
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
