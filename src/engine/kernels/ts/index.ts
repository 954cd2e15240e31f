import type { FloatDType } from "../../checkpoint/dtype.js";
import type { AttentionShape, GemmOptions, Kernels, WeightMatrix } from "../types.js";
import { attention } from "./attention.js";
import { addInPlace, embed, rmsNorm, rope, siluMul } from "./elementwise.js";
import { gemm } from "./gemm.js";
import { matmul } from "./matmul.js";
import { asF32Matrix, F32Matrix } from "./matrix.js";

/** The plain TypeScript reference kernels: single-threaded, f32 storage, f64 accumulation. */
export class TsKernels implements Kernels {
  readonly name = "ts";
  private scores = new Float64Array(256);
  private sums = new Float64Array(256);

  createMatrix(rows: number, cols: number, dtype: FloatDType, data: Uint8Array): WeightMatrix {
    return F32Matrix.fromStored(rows, cols, dtype, data);
  }

  embed(out: Float32Array, table: WeightMatrix, ids: ArrayLike<number>): void {
    embed(out, asF32Matrix(table), ids);
  }

  matmul(out: Float32Array, x: Float32Array, rows: number, w: WeightMatrix, bias?: Float32Array): void {
    matmul(out, x, rows, asF32Matrix(w), bias);
  }

  rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void {
    rmsNorm(out, x, weight, rows, eps);
  }

  rope(x: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void {
    rope(x, rows, heads, headDim, positions, cos, sin);
  }

  attention(out: Float32Array, q: Float32Array, rows: number, keys: Float32Array, values: Float32Array, start: number, shape: AttentionShape): void {
    if (this.scores.length < start + rows) this.scores = new Float64Array(Math.max(start + rows, this.scores.length * 2));
    attention(out, q, rows, keys, values, start, shape, this.scores);
  }

  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
    siluMul(out, gate, up, length);
  }

  addInPlace(x: Float32Array, y: Float32Array, length: number): void {
    addInPlace(x, y, length);
  }

  gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, options: GemmOptions = {}): void {
    if (this.sums.length < m * n) this.sums = new Float64Array(Math.max(m * n, 2 * this.sums.length));
    gemm(c, a, b, m, n, k, options, this.sums);
  }
}
