import type { AttentionShape, WeightMatrix } from "../../kernels/types.js";
import type { AddonMatrix } from "../../kernels/native/addon.js";
import { type NativeKernels, toInt32 } from "../../kernels/native/index.js";
import type { TrainingKernels } from "./types.js";

/**
 * The native training kernels, paired with `NativeKernels`: C++ with SIMD on the forward backend's
 * thread pool. The input gradient of a linear layer, dY·W, is the forward matmul against Wᵀ, which
 * is packed once per weight (f32) and kept: the backward then runs on the same tiles as prefill.
 */
export class NativeTrainingKernels implements TrainingKernels {
  readonly name = "native";
  /** Wᵀ of each weight the backward has seen, packed for the forward matmul. */
  private readonly transposed = new WeakMap<WeightMatrix, WeightMatrix>();
  /** Row-major f32 copies of the weights full-parameter training updates (`weightValues`). */
  private readonly values = new Map<WeightMatrix, Float32Array>();
  private product = new Float32Array(0);

  constructor(private readonly forward: NativeKernels) {}

  linearBackward(dx: Float32Array, dy: Float32Array, rows: number, w: WeightMatrix, accumulate: boolean): void {
    const wt = this.transposedOf(w);
    if (!accumulate) {
      this.forward.matmul(dx, dy, rows, wt);
      return;
    }
    const size = rows * w.cols;
    if (this.product.length < size) this.product = new Float32Array(Math.max(size, 2 * this.product.length));
    const product = this.product.subarray(0, size);
    this.forward.matmul(product, dy, rows, wt);
    this.forward.addInPlace(dx, product, size);
  }

  linearWeightBackward(dWeight: Float32Array, dBias: Float32Array | undefined, dy: Float32Array, x: Float32Array, rows: number, outDim: number, inDim: number): void {
    this.forward.context.linearWeightBackward(dWeight, dBias, dy, x, rows, outDim, inDim);
  }

  embedBackward(dTable: Float32Array, dOut: Float32Array, ids: ArrayLike<number>, dim: number): void {
    this.forward.context.embedBackward(dTable, dOut, toInt32(ids), dim);
  }

  weightValues(w: WeightMatrix): Float32Array {
    let values = this.values.get(w);
    if (!values) {
      values = new Float32Array(w.rows * w.cols);
      this.handle(w).read(values);
      this.values.set(w, values);
    }
    return values;
  }

  syncWeights(): void {
    for (const [w, values] of this.values) {
      this.handle(w).write(values);
      this.transposed.delete(w);
    }
  }

  rmsNormBackward(dx: Float32Array, dy: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number, accumulate: boolean, dWeight?: Float32Array): void {
    this.forward.context.rmsNormBackward(dx, dy, x, weight, rows, eps, accumulate, dWeight);
  }

  ropeBackward(dx: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void {
    this.forward.context.ropeBackward(dx, rows, heads, headDim, positions, cos, sin);
  }

  siluMulBackward(dGate: Float32Array, dUp: Float32Array, dOut: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
    this.forward.context.siluMulBackward(dGate, dUp, dOut, gate, up, length);
  }

  attentionBackward(dq: Float32Array, dKeys: Float32Array, dValues: Float32Array, dOut: Float32Array, q: Float32Array, keys: Float32Array, values: Float32Array, rows: number, start: number, shape: AttentionShape): void {
    this.forward.context.attentionBackward(dq, dKeys, dValues, dOut, q, keys, values, rows, start, shape.heads, shape.kvHeads, shape.headDim);
  }

  private handle(w: WeightMatrix): AddonMatrix {
    return this.forward.handle(w);
  }

  private transposedOf(w: WeightMatrix): WeightMatrix {
    let wt = this.transposed.get(w);
    if (!wt) {
      const values = this.values.get(w) ?? readValues(this.handle(w), w);
      const t = new Float32Array(values.length);
      const { rows, cols } = w;
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) t[c * rows + r] = values[r * cols + c]!;
      }
      wt = this.forward.createMatrix(cols, rows, "F32", new Uint8Array(t.buffer));
      this.transposed.set(w, wt);
    }
    return wt;
  }
}

function readValues(handle: AddonMatrix, w: WeightMatrix): Float32Array {
  const values = new Float32Array(w.rows * w.cols);
  handle.read(values);
  return values;
}
