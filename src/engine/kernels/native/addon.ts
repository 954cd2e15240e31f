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
}
