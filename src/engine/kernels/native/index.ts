import type { FloatDType } from "../../checkpoint/dtype.js";
import type { AttentionShape, GemmOptions, Kernels, WeightMatrix } from "../types.js";
import type { AddonContext, AddonMatrix, KernelAddon, SimdChoice } from "./addon.js";

export interface NativeKernelsOptions {
  /** Threads of the kernel pool, the calling thread included (default: the machine's parallelism). */
  threads: number;
  simd?: SimdChoice;
}

/** A weight packed by the native addon: kept in its stored precision, laid out for the matmul. */
export class NativeMatrix implements WeightMatrix {
  readonly rows: number;
  readonly cols: number;
  readonly dtype: "f32" | "f16" | "bf16";

  constructor(
    readonly owner: NativeKernels,
    readonly handle: AddonMatrix,
  ) {
    this.rows = handle.rows;
    this.cols = handle.cols;
    this.dtype = handle.dtype;
  }
}

/**
 * The native kernels: C++ with AVX-512 or AVX2/FMA/F16C (or portable loops) on a small persistent
 * thread pool. Weights stay f32/f16/bf16 as stored and are widened inside the matmul. One instance is
 * used by one JavaScript thread at a time; its calls block while the pool computes.
 */
export class NativeKernels implements Kernels {
  readonly name = "native";
  /** The addon's kernel context; the native training kernels call its backward methods. */
  readonly context: AddonContext;

  constructor(
    readonly addon: KernelAddon,
    options: NativeKernelsOptions,
  ) {
    this.context = new addon.Context(options.threads, options.simd ?? "auto");
  }

  /** Threads of the pool, the calling thread included. */
  get threads(): number {
    return this.context.threads;
  }

  /** The SIMD level in use: "avx512", "avx2" or "scalar". */
  get simd(): string {
    return this.context.simd;
  }

  createMatrix(rows: number, cols: number, dtype: FloatDType, data: Uint8Array): WeightMatrix {
    return new NativeMatrix(this, new this.addon.Matrix(rows, cols, dtype, data));
  }

  embed(out: Float32Array, table: WeightMatrix, ids: ArrayLike<number>): void {
    this.context.embed(out, this.handle(table), toInt32(ids));
  }

  matmul(out: Float32Array, x: Float32Array, rows: number, w: WeightMatrix, bias?: Float32Array): void {
    if (out.buffer === x.buffer && out.byteOffset < x.byteOffset + x.byteLength && x.byteOffset < out.byteOffset + out.byteLength) {
      throw new RangeError("matmul: the output must not overlap the input");
    }
    this.context.matmul(out, x, rows, this.handle(w), bias);
  }

  rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void {
    this.context.rmsNorm(out, x, weight, rows, eps);
  }

  rope(x: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void {
    this.context.rope(x, rows, heads, headDim, positions, cos, sin);
  }

  attention(out: Float32Array, q: Float32Array, rows: number, keys: Float32Array, values: Float32Array, start: number, shape: AttentionShape): void {
    this.context.attention(out, q, rows, keys, values, start, shape.heads, shape.kvHeads, shape.headDim);
  }

  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
    this.context.siluMul(out, gate, up, length);
  }

  addInPlace(x: Float32Array, y: Float32Array, length: number): void {
    this.context.addInPlace(x, y, length);
  }

  gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, options: GemmOptions = {}): void {
    const { transposeA = false, transposeB = false, alpha = 1, accumulate = false } = options;
    this.context.gemm(c, a, b, m, n, k, transposeA, transposeB, alpha, accumulate);
  }

  /** The addon's matrix behind a weight of this backend. */
  handle(matrix: WeightMatrix): AddonMatrix {
    if (!(matrix instanceof NativeMatrix) || matrix.owner.addon !== this.addon) throw new TypeError("this weight matrix belongs to another kernel backend");
    return matrix.handle;
  }
}

export function toInt32(ids: ArrayLike<number>): Int32Array {
  if (ids instanceof Int32Array) return ids;
  const result = Int32Array.from(ids);
  for (let i = 0; i < ids.length; i++) {
    if (result[i] !== ids[i]) throw new RangeError(`token id ${ids[i]} is not a valid token id`);
  }
  return result;
}
