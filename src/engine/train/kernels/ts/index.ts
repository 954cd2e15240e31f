import type { AttentionShape, WeightMatrix } from "../../../kernels/types.js";
import { asF32Matrix } from "../../../kernels/ts/matrix.js";
import type { TrainingKernels } from "../types.js";
import { attentionBackward, attentionBackwardScratchSize } from "./attention.js";
import { embedBackward, rmsNormBackward, ropeBackward, siluMulBackward } from "./elementwise.js";
import { linearBackward, linearWeightBackward } from "./linear.js";

/** The TypeScript training kernels, paired with the TS forward kernels: single-threaded, f64 sums. */
export class TsTrainingKernels implements TrainingKernels {
  readonly name = "ts";
  private scratch = new Float64Array(1024);
  /** Transposed copies of dy and x for `linearWeightBackward`. */
  private transposed = new Float32Array(0);

  linearBackward(dx: Float32Array, dy: Float32Array, rows: number, w: WeightMatrix, accumulate: boolean): void {
    const matrix = asF32Matrix(w);
    linearBackward(dx, dy, rows, matrix, accumulate, this.ensureScratch(4 * matrix.cols));
  }

  linearWeightBackward(dWeight: Float32Array, dBias: Float32Array | undefined, dy: Float32Array, x: Float32Array, rows: number, outDim: number, inDim: number): void {
    if (this.transposed.length < rows * (outDim + inDim)) this.transposed = new Float32Array(Math.max(rows * (outDim + inDim), 2 * this.transposed.length));
    const dyT = this.transposed.subarray(0, rows * outDim);
    const xT = this.transposed.subarray(rows * outDim, rows * (outDim + inDim));
    linearWeightBackward(dWeight, dBias, dy, x, rows, outDim, inDim, dyT, xT);
  }

  embedBackward(dTable: Float32Array, dOut: Float32Array, ids: ArrayLike<number>, dim: number): void {
    embedBackward(dTable, dOut, ids, dim);
  }

  weightValues(w: WeightMatrix): Float32Array {
    return asF32Matrix(w).data;
  }

  syncWeights(): void {
    // weightValues are the very arrays the TS forward kernels read.
  }

  rmsNormBackward(dx: Float32Array, dy: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number, accumulate: boolean, dWeight?: Float32Array): void {
    rmsNormBackward(dx, dy, x, weight, rows, eps, accumulate, dWeight);
  }

  ropeBackward(dx: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void {
    ropeBackward(dx, rows, heads, headDim, positions, cos, sin);
  }

  siluMulBackward(dGate: Float32Array, dUp: Float32Array, dOut: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
    siluMulBackward(dGate, dUp, dOut, gate, up, length);
  }

  attentionBackward(dq: Float32Array, dKeys: Float32Array, dValues: Float32Array, dOut: Float32Array, q: Float32Array, keys: Float32Array, values: Float32Array, rows: number, start: number, shape: AttentionShape): void {
    attentionBackward(dq, dKeys, dValues, dOut, q, keys, values, rows, start, shape, this.ensureScratch(attentionBackwardScratchSize(start + rows, shape.headDim)));
  }

  private ensureScratch(size: number): Float64Array {
    if (this.scratch.length < size) this.scratch = new Float64Array(Math.max(size, 2 * this.scratch.length));
    return this.scratch;
  }
}
