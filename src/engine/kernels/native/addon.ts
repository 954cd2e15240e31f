import type { FloatDType } from "../../checkpoint/dtype.js";

/** The JavaScript surface of the native addon (native/src/addon.cc); every argument is checked there. */
export interface KernelAddon {
  Context: new (threads: number, simd: SimdChoice) => AddonContext;
  Matrix: new (rows: number, cols: number, dtype: FloatDType, data: Uint8Array) => AddonMatrix;
  /** The best SIMD level this CPU supports: "avx512", "avx2" or "scalar". */
  bestSimd: string;
}

/** "auto" picks the best level the CPU supports; the others force one (tests, comparisons). */
export type SimdChoice = "auto" | "avx512" | "avx2" | "scalar";

export const SIMD_LEVELS = ["avx512", "avx2", "scalar"] as const;

export interface AddonMatrix {
  readonly rows: number;
  readonly cols: number;
  readonly dtype: "f32" | "f16" | "bf16";
  readonly byteLength: number;
  /** Every value widened to f32, row-major. */
  read(out: Float32Array): void;
  /** Replaces every value (f32, row-major), rounded to the matrix's dtype. */
  write(values: Float32Array): void;
}

export interface AddonContext {
  readonly threads: number;
  readonly simd: string;
  matmul(out: Float32Array, x: Float32Array, rows: number, w: AddonMatrix, bias: Float32Array | undefined): void;
  embed(out: Float32Array, table: AddonMatrix, ids: Int32Array): void;
  rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void;
  rope(x: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void;
  attention(out: Float32Array, q: Float32Array, rows: number, keys: Float32Array, values: Float32Array, start: number, heads: number, kvHeads: number, headDim: number): void;
  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void;
  addInPlace(x: Float32Array, y: Float32Array, length: number): void;
  gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, transposeA: boolean, transposeB: boolean, alpha: number, accumulate: boolean): void;
  linearWeightBackward(dWeight: Float32Array, dBias: Float32Array | undefined, dy: Float32Array, x: Float32Array, rows: number, outDim: number, inDim: number): void;
  rmsNormBackward(dx: Float32Array, dy: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number, accumulate: boolean, dWeight: Float32Array | undefined): void;
  ropeBackward(dx: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void;
  siluMulBackward(dGate: Float32Array, dUp: Float32Array, dOut: Float32Array, gate: Float32Array, up: Float32Array, length: number): void;
  embedBackward(dTable: Float32Array, dOut: Float32Array, ids: Int32Array, dim: number): void;
  attentionBackward(dq: Float32Array, dKeys: Float32Array, dValues: Float32Array, dOut: Float32Array, q: Float32Array, keys: Float32Array, values: Float32Array, rows: number, start: number, heads: number, kvHeads: number, headDim: number): void;
}
