import type { FloatDType } from "../../checkpoint/dtype.js";

/**
 * The JavaScript surface of the native addon (native/src/addon.cc); every argument is checked there.
 * Its methods take positional arguments (the C++ boundary); `NativeKernels` presents the `Kernels`
 * interface over them.
 */
export interface KernelAddon {
  Context: new (threads: number, simd: SimdChoice, matmulDepth?: number) => AddonContext;
  Matrix: {
    /** Packs a row-major checkpoint tensor; a bf16 one may be packed paired for the bf16 products (needs `bf16Products`). */
    new (rows: number, cols: number, dtype: FloatDType, data: Uint8Array, layout?: "paired"): AddonMatrix;
    /** Wᵀ of another matrix, in f32 (every value widened exactly) or in the matrix's own dtype. */
    new (transposeOf: AddonMatrix, dtype: FloatDType): AddonMatrix;
    /**
     * Another matrix rounded to bf16 and paired for the bf16 products (needs `bf16Products`): W
     * itself (the forward's), or its transpose (the backward's input gradient's).
     */
    new (of: AddonMatrix, dtype: "BF16", layout: "paired" | "paired-transposed"): AddonMatrix;
  };
  /** The best SIMD level this CPU supports: "avx512", "avx2" or "scalar". */
  bestSimd: string;
  /** Whether this CPU has AVX-512 BF16, which the bf16 products need (at the avx512 level). */
  bf16Products: boolean;
}

/** "auto" picks the best level the CPU supports; the others force one (tests, comparisons). */
export type SimdChoice = "auto" | "avx512" | "avx2" | "scalar";

export const SIMD_LEVELS = ["avx512", "avx2", "scalar"] as const;

export interface AddonMatrix {
  readonly rows: number;
  readonly cols: number;
  readonly dtype: "f32" | "f16" | "bf16";
  /** Laid out for the bf16 products (packed_matrix.h), which the matmul then runs (needs `bf16Products`). */
  readonly paired: boolean;
  readonly byteLength: number;
  /** Every value widened to f32, row-major. */
  read(out: Float32Array): void;
}

export interface AddonContext {
  readonly threads: number;
  readonly simd: string;
  /** Whether this context runs the bf16 products (the CPU has them and the level is avx512). */
  readonly bf16Products: boolean;
  /** out (+)= x·Wᵀ (+ bias); with `accumulate` each output's chain starts from its value in out. */
  matmul(out: Float32Array, x: Float32Array, rows: number, w: AddonMatrix, bias: Float32Array | undefined, accumulate?: boolean): void;
  /**
   * Replaces every value of `w` with `values` (f32, row-major), rounded to its dtype; with
   * `transposed`, an f32 or paired `w` becomes valuesᵀ (values row-major, cols × rows). On the pool.
   */
  writeMatrix(w: AddonMatrix, values: Float32Array, transposed: boolean): void;
  embed(out: Float32Array, table: AddonMatrix, ids: Int32Array): void;
  rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void;
  rope(x: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void;
  attention(out: Float32Array, q: Float32Array, rows: number, keys: Float32Array, values: Float32Array, start: number, heads: number, kvHeads: number, headDim: number): void;
  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void;
  addInPlace(x: Float32Array, y: Float32Array, length: number): void;
  gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, transposeA: boolean, transposeB: boolean, alpha: number, accumulate: boolean): void;
  /** With `bf16`, dW's products take bf16-rounded dy and x (needs `bf16Products`); the bias's sums stay f32. */
  linearWeightBackward(dWeight: Float32Array, dBias: Float32Array | undefined, dy: Float32Array, x: Float32Array, rows: number, outDim: number, inDim: number, bf16?: boolean): void;
  rmsNormBackward(dx: Float32Array, dy: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number, accumulate: boolean, dWeight: Float32Array | undefined): void;
  ropeBackward(dx: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void;
  siluMulBackward(dGate: Float32Array, dUp: Float32Array, dOut: Float32Array, gate: Float32Array, up: Float32Array, length: number): void;
  embedBackward(dTable: Float32Array, dOut: Float32Array, ids: Int32Array, dim: number): void;
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
    heads: number,
    kvHeads: number,
    headDim: number,
  ): void;
  /** Per row: the max, Σ exp(x − max) and Σ exp(x − max)·x, with the sampler's exp table (2^(-j/64)). */
  tokenLogprobSums(logits: Float32Array, rows: number, vocab: number, fractionPowers: Float64Array, maxes: Float64Array, sums: Float64Array, weighted: Float64Array): void;
  tokenLogprobsBackward(logits: Float32Array, rows: number, vocab: number, targets: Int32Array, normalizers: Float64Array, gradients: Float64Array, fractionPowers: Float64Array): void;
  /** Returns how many updated weights are not finite. */
  adamwStep(params: Float32Array, grads: Float32Array, expAvg: Float32Array, expAvgSq: Float32Array, beta1: number, beta2: number, eps: number, stepSize: number, biasCorrection2Sqrt: number, decay: number): number;
  sumOfSquares(x: Float32Array): number;
  scale(x: Float32Array, factor: number): void;
}
