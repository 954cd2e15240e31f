import type { FloatDType } from "../../checkpoint/dtype.js";
import type {
  AdamWStepArgs,
  AttentionArgs,
  AttentionBackwardArgs,
  ProductPrecision,
  GemmOptions,
  Kernels,
  LinearBackwardArgs,
  LinearWeightBackwardArgs,
  RmsNormBackwardArgs,
  RopeArgs,
  SiluMulBackwardArgs,
  TokenLogprobsArgs,
  TokenLogprobsBackwardArgs,
  WeightMatrix,
} from "../types.js";
import { adamwStep } from "./adamw.js";
import { attention, attentionBackward, attentionBackwardScratchSize } from "./attention.js";
import { roundedToBf16 } from "./bf16.js";
import { embed, embedBackward } from "./embedding.js";
import { gemm } from "./gemm.js";
import { scale, sumOfSquares } from "./grad-norm.js";
import { addBiasGradient, linearBackward, linearWeightBackward, matmul } from "./linear.js";
import { asF32Matrix, F32Matrix } from "./matrix.js";
import { addInPlace } from "./residual.js";
import { rmsNorm, rmsNormBackward } from "./rms-norm.js";
import { rope, ropeBackward } from "./rope.js";
import { siluMul, siluMulBackward } from "./silu-mul.js";
import { tokenLogprobs, tokenLogprobsBackward } from "./token-logprobs.js";

/** The plain TypeScript reference kernels: single-threaded, f32 storage, f64 accumulation. */
export class TsKernels implements Kernels {
  readonly name = "ts";
  readonly forwardPrecision: ProductPrecision;
  readonly backwardPrecision: ProductPrecision;
  private scratch = new Float64Array(1024);
  /** The bf16 forward's rounded weights, dropped when the weights change (`syncWeights`). */
  private roundedWeights = new WeakMap<F32Matrix, F32Matrix>();
  /** The bf16 forward's rounded x. */
  private roundedInput = new Float32Array(0);
  /** Transposed copies of dy and x for `linearWeightBackward`. */
  private transposed = new Float32Array(0);

  constructor(options: { forwardPrecision?: ProductPrecision; backwardPrecision?: ProductPrecision } = {}) {
    this.forwardPrecision = options.forwardPrecision ?? "f32";
    this.backwardPrecision = options.backwardPrecision ?? "f32";
  }

  createMatrix(rows: number, cols: number, dtype: FloatDType, data: Uint8Array): WeightMatrix {
    return F32Matrix.fromStored(rows, cols, dtype, data);
  }

  weightValues(w: WeightMatrix): Float32Array {
    return asF32Matrix(w).data;
  }

  syncWeights(): void {
    // weightValues are the very arrays these kernels read; only the bf16 forward's copies are stale.
    this.roundedWeights = new WeakMap();
  }

  matmul(out: Float32Array, x: Float32Array, rows: number, w: WeightMatrix, bias?: Float32Array): void {
    let matrix = asF32Matrix(w);
    if (this.forwardPrecision === "bf16") {
      let rounded = this.roundedWeights.get(matrix);
      if (!rounded) {
        rounded = new F32Matrix(matrix.rows, matrix.cols, roundedToBf16(matrix.data));
        this.roundedWeights.set(matrix, rounded);
      }
      matrix = rounded;
      const size = rows * matrix.cols;
      if (this.roundedInput.length < size) this.roundedInput = new Float32Array(Math.max(size, 2 * this.roundedInput.length));
      x = roundedToBf16(x.subarray(0, size), this.roundedInput);
    }
    matmul(out, x, rows, matrix, bias);
  }

  linearBackward(args: LinearBackwardArgs): void {
    let matrix = asF32Matrix(args.w);
    if (this.backwardPrecision === "bf16") {
      // Fresh copies each call: a trained weight's values change between steps.
      matrix = new F32Matrix(matrix.rows, matrix.cols, roundedToBf16(matrix.data));
      args = { ...args, dy: roundedToBf16(args.dy.subarray(0, args.rows * matrix.rows)) };
    }
    linearBackward(args, matrix, this.ensureScratch(4 * matrix.cols));
  }

  linearWeightBackward(args: LinearWeightBackwardArgs): void {
    const { rows, outDim, inDim } = args;
    if (this.backwardPrecision === "bf16") {
      // The bias's gradient is a sum of dy, not a product: it keeps dy's f32 values.
      if (args.dBias) addBiasGradient(args.dBias, args.dy, rows, outDim);
      args = { ...args, dBias: undefined, dy: roundedToBf16(args.dy.subarray(0, rows * outDim)), x: roundedToBf16(args.x.subarray(0, rows * inDim)) };
    }
    const size = rows * (outDim + inDim);
    if (this.transposed.length < size) this.transposed = new Float32Array(Math.max(size, 2 * this.transposed.length));
    linearWeightBackward(args, this.transposed.subarray(0, rows * outDim), this.transposed.subarray(rows * outDim, size));
  }

  gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, options: GemmOptions = {}): void {
    gemm(c, a, b, m, n, k, options, this.ensureScratch(m * n));
  }

  embed(out: Float32Array, table: WeightMatrix, ids: ArrayLike<number>): void {
    embed(out, asF32Matrix(table), ids);
  }

  embedBackward(dTable: Float32Array, dOut: Float32Array, ids: ArrayLike<number>, dim: number): void {
    embedBackward(dTable, dOut, ids, dim);
  }

  rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void {
    rmsNorm(out, x, weight, rows, eps);
  }

  rmsNormBackward(args: RmsNormBackwardArgs): void {
    rmsNormBackward(args);
  }

  rope(args: RopeArgs): void {
    rope(args);
  }

  ropeBackward(args: RopeArgs): void {
    ropeBackward(args);
  }

  attention(args: AttentionArgs): void {
    attention(args, this.ensureScratch(args.start + args.rows));
  }

  attentionBackward(args: AttentionBackwardArgs): void {
    attentionBackward(args, this.ensureScratch(attentionBackwardScratchSize(args.start + args.rows, args.shape.headDim)));
  }

  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
    siluMul(out, gate, up, length);
  }

  siluMulBackward(args: SiluMulBackwardArgs): void {
    siluMulBackward(args);
  }

  addInPlace(x: Float32Array, y: Float32Array, length: number): void {
    addInPlace(x, y, length);
  }

  tokenLogprobs(args: TokenLogprobsArgs): void {
    tokenLogprobs(args);
  }

  tokenLogprobsBackward(args: TokenLogprobsBackwardArgs): void {
    tokenLogprobsBackward(args);
  }

  adamwStep(args: AdamWStepArgs): number {
    return adamwStep(args);
  }

  sumOfSquares(x: Float32Array): number {
    return sumOfSquares(x);
  }

  scale(x: Float32Array, factor: number): void {
    scale(x, factor);
  }

  /** One scratch buffer for the kernels that sum in doubles (each call uses it only while it runs). */
  private ensureScratch(size: number): Float64Array {
    if (this.scratch.length < size) this.scratch = new Float64Array(Math.max(size, 2 * this.scratch.length));
    return this.scratch;
  }
}
