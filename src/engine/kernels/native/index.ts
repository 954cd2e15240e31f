import type { FloatDType } from "../../checkpoint/dtype.js";
import { EXP_FRACTION_POWERS } from "../../sampling/fast-math.js";
import { adamwScalars, checkAdamwTensors } from "../ts/adamw.js";
import { finishTokenLogprobs } from "../ts/token-logprobs.js";
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
import type { AddonContext, AddonMatrix, KernelAddon, SimdChoice } from "./addon.js";

export interface NativeKernelsOptions {
  /** Threads of the kernel pool, the calling thread included (default: the machine's parallelism). */
  threads: number;
  simd?: SimdChoice;
  /** Columns per block of the matmul's sums (default 1024); the bits do not depend on it, which tests check. */
  matmulDepth?: number;
  /** Default "f32"; "bf16" needs a context with `bf16Products` (AVX-512 BF16), else the constructor throws. */
  forwardPrecision?: ProductPrecision;
  /** As `forwardPrecision`. */
  backwardPrecision?: ProductPrecision;
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
 *
 * The input gradient of a linear layer, dY·W, is the forward matmul against Wᵀ, packed once per
 * weight (f32) and kept: the backward then runs on the same tiles as prefill.
 *
 * Under the bf16 forward every matmul multiplies a paired bf16 matrix (packed_matrix.h): a bf16
 * checkpoint's weight is packed that way from the start (the same values), any other weight gets a
 * rounded copy on first use, rewritten after each `syncWeights`.
 */
export class NativeKernels implements Kernels {
  readonly name = "native";
  readonly forwardPrecision: ProductPrecision;
  readonly backwardPrecision: ProductPrecision;
  private readonly context: AddonContext;
  /** The bf16 forward's paired copies of weights not stored paired. */
  private readonly forwardCopies = new WeakMap<WeightMatrix, AddonMatrix>();
  /** Wᵀ of each weight the backward has seen, packed for the forward matmul. */
  private readonly transposed = new WeakMap<WeightMatrix, WeightMatrix>();
  /** Row-major f32 copies of the weights full-parameter training updates (`weightValues`). */
  private readonly values = new Map<WeightMatrix, Float32Array>();
  /** Weights whose Wᵀ predates the last `syncWeights` (rewritten in place when next needed). */
  private readonly staleTransposes = new Set<WeightMatrix>();

  constructor(
    readonly addon: KernelAddon,
    options: NativeKernelsOptions,
  ) {
    this.context = new addon.Context(options.threads, options.simd ?? "auto", options.matmulDepth);
    this.forwardPrecision = options.forwardPrecision ?? "f32";
    this.backwardPrecision = options.backwardPrecision ?? "f32";
    if ((this.forwardPrecision === "bf16" || this.backwardPrecision === "bf16") && !this.context.bf16Products) {
      throw new RangeError(`bf16 products need AVX-512 BF16 at the avx512 level (this context: ${this.context.simd}, CPU support: ${addon.bf16Products})`);
    }
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
    if (this.forwardPrecision === "bf16" && dtype === "BF16") return new NativeMatrix(this, new this.addon.Matrix(rows, cols, dtype, data, "paired"));
    return new NativeMatrix(this, new this.addon.Matrix(rows, cols, dtype, data));
  }

  weightValues(w: WeightMatrix): Float32Array {
    let values = this.values.get(w);
    if (!values) {
      values = readValues(this.handle(w), w);
      this.values.set(w, values);
    }
    return values;
  }

  syncWeights(): void {
    for (const [w, values] of this.values) {
      this.context.writeMatrix(this.handle(w), values, false);
      const copy = this.forwardCopies.get(w);
      if (copy) this.context.writeMatrix(copy, values, false);
      if (this.transposed.has(w)) this.staleTransposes.add(w);
    }
  }

  matmul(out: Float32Array, x: Float32Array, rows: number, w: WeightMatrix, bias?: Float32Array): void {
    checkDisjoint(out, x);
    this.context.matmul(out, x, rows, this.forwardHandle(w), bias);
  }

  linearBackward({ dx, dy, rows, w, accumulate = false }: LinearBackwardArgs): void {
    checkDisjoint(dx, dy);
    this.context.matmul(dx, dy, rows, this.handle(this.transposedOf(w)), undefined, accumulate);
  }

  linearWeightBackward({ dWeight, dBias, dy, x, rows, outDim, inDim }: LinearWeightBackwardArgs): void {
    this.context.linearWeightBackward(dWeight, dBias, dy, x, rows, outDim, inDim, this.backwardPrecision === "bf16");
  }

  gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, options: GemmOptions = {}): void {
    const { transposeA = false, transposeB = false, alpha = 1, accumulate = false } = options;
    this.context.gemm(c, a, b, m, n, k, transposeA, transposeB, alpha, accumulate);
  }

  embed(out: Float32Array, table: WeightMatrix, ids: ArrayLike<number>): void {
    this.context.embed(out, this.handle(table), toInt32(ids));
  }

  embedBackward(dTable: Float32Array, dOut: Float32Array, ids: ArrayLike<number>, dim: number): void {
    this.context.embedBackward(dTable, dOut, toInt32(ids), dim);
  }

  rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void {
    this.context.rmsNorm(out, x, weight, rows, eps);
  }

  rmsNormBackward({ dx, dy, x, weight, rows, eps, accumulate = false, dWeight }: RmsNormBackwardArgs): void {
    this.context.rmsNormBackward(dx, dy, x, weight, rows, eps, accumulate, dWeight);
  }

  rope({ x, rows, heads, headDim, positions, cos, sin }: RopeArgs): void {
    this.context.rope(x, rows, heads, headDim, positions, cos, sin);
  }

  ropeBackward({ x, rows, heads, headDim, positions, cos, sin }: RopeArgs): void {
    this.context.ropeBackward(x, rows, heads, headDim, positions, cos, sin);
  }

  attention({ out, q, rows, keys, values, start, shape }: AttentionArgs): void {
    this.context.attention(out, q, rows, keys, values, start, shape.heads, shape.kvHeads, shape.headDim);
  }

  attentionBackward({ dq, dKeys, dValues, dOut, q, keys, values, rows, start, shape }: AttentionBackwardArgs): void {
    this.context.attentionBackward(dq, dKeys, dValues, dOut, q, keys, values, rows, start, shape.heads, shape.kvHeads, shape.headDim);
  }

  siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
    this.context.siluMul(out, gate, up, length);
  }

  siluMulBackward({ dGate, dUp, dOut, gate, up, length }: SiluMulBackwardArgs): void {
    this.context.siluMulBackward(dGate, dUp, dOut, gate, up, length);
  }

  addInPlace(x: Float32Array, y: Float32Array, length: number): void {
    this.context.addInPlace(x, y, length);
  }

  tokenLogprobs(args: TokenLogprobsArgs): void {
    const { logits, rows, vocab, normalizers, logprobs, entropies } = args;
    // The addon leaves max, Σe and Σe·x in the outputs; the logarithm is taken in JavaScript.
    this.context.tokenLogprobSums(logits, rows, vocab, EXP_FRACTION_POWERS, normalizers, logprobs, entropies);
    finishTokenLogprobs(args);
  }

  tokenLogprobsBackward({ logits, rows, vocab, targets, normalizers, gradients }: TokenLogprobsBackwardArgs): void {
    this.context.tokenLogprobsBackward(logits, rows, vocab, targets, normalizers, gradients, EXP_FRACTION_POWERS);
  }

  adamwStep(args: AdamWStepArgs): number {
    checkAdamwTensors(args);
    const { stepSize, biasCorrection2Sqrt, decay } = adamwScalars(args);
    return this.context.adamwStep(args.params, args.grads, args.expAvg, args.expAvgSq, args.beta1, args.beta2, args.eps, stepSize, biasCorrection2Sqrt, decay);
  }

  sumOfSquares(x: Float32Array): number {
    return this.context.sumOfSquares(x);
  }

  scale(x: Float32Array, factor: number): void {
    this.context.scale(x, factor);
  }

  /** The addon's matrix behind a weight of this backend. */
  handle(matrix: WeightMatrix): AddonMatrix {
    if (!(matrix instanceof NativeMatrix) || matrix.owner.addon !== this.addon) throw new TypeError("this weight matrix belongs to another kernel backend");
    return matrix.handle;
  }

  /** What the forward multiplies: W itself, or under the bf16 forward a paired W (made on first use when W is not). */
  private forwardHandle(w: WeightMatrix): AddonMatrix {
    const handle = this.handle(w);
    if (this.forwardPrecision === "f32" || handle.paired) return handle;
    let copy = this.forwardCopies.get(w);
    if (!copy) {
      copy = new this.addon.Matrix(handle, "BF16", "paired");
      this.forwardCopies.set(w, copy);
    }
    return copy;
  }

  /**
   * Wᵀ, made on first use from W's packed values. A frozen W's is in W's own dtype: the same
   * values, so the same products, in half the memory for a 16-bit W (a Qwen2.5-0.5B LoRA job
   * holds 0.7 GB less). A W that training updates (`weightValues`) has an f32 Wᵀ, rewritten in
   * place from those f32 values after they change. Under bf16 backward products every Wᵀ is a
   * paired bf16 matrix, rewritten the same way.
   */
  private transposedOf(w: WeightMatrix): WeightMatrix {
    let target = this.transposed.get(w);
    if (target && !this.staleTransposes.has(w)) return target;
    this.staleTransposes.delete(w);
    const values = this.values.get(w);
    const paired = this.backwardPrecision === "bf16";
    if (!target || (values && !paired && target.dtype !== "f32")) {
      const handle = this.handle(w);
      target = new NativeMatrix(this, paired ? new this.addon.Matrix(handle, "BF16", "paired-transposed") : new this.addon.Matrix(handle, values ? "F32" : toFloatDType(w.dtype)));
    }
    if (values) this.context.writeMatrix(this.handle(target), values, true);
    this.transposed.set(w, target);
    return target;
  }
}

function toFloatDType(dtype: WeightMatrix["dtype"]): FloatDType {
  return dtype === "f32" ? "F32" : dtype === "f16" ? "F16" : "BF16";
}

/** The matmul writes its output while it reads its input, so the two must not share memory. */
function checkDisjoint(out: Float32Array, x: Float32Array): void {
  if (out.buffer === x.buffer && out.byteOffset < x.byteOffset + x.byteLength && x.byteOffset < out.byteOffset + out.byteLength) {
    throw new RangeError("matmul: the output must not overlap the input");
  }
}

function readValues(handle: AddonMatrix, w: WeightMatrix): Float32Array {
  const values = new Float32Array(w.rows * w.cols);
  handle.read(values);
  return values;
}

export function toInt32(ids: ArrayLike<number>): Int32Array {
  if (ids instanceof Int32Array) return ids;
  const result = Int32Array.from(ids);
  for (let i = 0; i < ids.length; i++) {
    if (result[i] !== ids[i]) throw new RangeError(`token id ${ids[i]} is not a valid token id`);
  }
  return result;
}
