/**
 * AdamW (decoupled weight decay, bias-corrected moments) exactly as PyTorch's `torch.optim.AdamW`
 * computes it, and global gradient-norm clipping as `clip_grad_norm_` (`docs/api/training.md#optimizer-steps`,
 * docs/api/training.md#sft). Parameters and gradients are lists of Float32Array (one per tensor); the arithmetic is the
 * kernels' (`Kernels.adamwStep`, `sumOfSquares`, `scale`): doubles, stored back as float32.
 */
import { TsKernels } from "../kernels/ts/index.js";
import type { Kernels } from "../kernels/types.js";
import { NonFiniteTrainingError } from "./errors.js";

/** The kernels the optimizer runs on. */
export type OptimizerKernels = Pick<Kernels, "adamwStep" | "sumOfSquares" | "scale">;

/** The TypeScript reference, for callers that hold no model (tests, small tools). */
const referenceKernels: OptimizerKernels = new TsKernels();

export type TrainingMode = "rl" | "sft";

export interface AdamWOptions {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

/** RL: weight decay 0.1 and max grad norm 0.1; SFT: 0.0 and 1.0. Betas (0.9, 0.99) for both. */
export const OPTIMIZER_SETTINGS: Record<TrainingMode, AdamWOptions & { maxGradNorm: number }> = {
  rl: { beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 0.1 },
  sft: { beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.0, maxGradNorm: 1.0 },
};

export interface AdamWState {
  /** Steps taken since the last reset (the bias-correction exponent). */
  step: number;
  /** The mode of the last job, for `beginJob`. */
  mode: TrainingMode | null;
  expAvg: Float32Array[];
  expAvgSq: Float32Array[];
}

export interface AdamWConfig {
  /** Default: the TypeScript reference kernels. */
  kernels?: OptimizerKernels;
  /** Default: RL's settings (`beginJob` switches them per job). */
  settings?: AdamWOptions;
  /** Moments to resume from (`exportState` of an earlier run). */
  state?: AdamWState;
}

export class AdamW {
  private state: AdamWState;
  private options: AdamWOptions;
  private readonly kernels: OptimizerKernels;

  constructor(
    private readonly sizes: readonly number[],
    { kernels = referenceKernels, settings = OPTIMIZER_SETTINGS.rl, state }: AdamWConfig = {},
  ) {
    this.kernels = kernels;
    this.options = settings;
    if (state) {
      const matches = state.expAvg.length === sizes.length && sizes.every((size, i) => state.expAvg[i]!.length === size && state.expAvgSq[i]!.length === size);
      if (!matches) throw new RangeError("optimizer state does not match the parameter shapes");
    }
    this.state = state ?? emptyState(sizes);
  }

  get stepCount(): number {
    return this.state.step;
  }

  get settings(): AdamWOptions {
    return this.options;
  }

  /**
   * Before a job: the moments are cleared when the mode switches between SFT and RL (as the
   * reference trainer does), and the mode's weight decay applies.
   */
  beginJob(mode: TrainingMode): void {
    if (this.state.mode !== null && this.state.mode !== mode) this.reset();
    this.state.mode = mode;
    const { maxGradNorm: _unused, ...options } = OPTIMIZER_SETTINGS[mode];
    this.options = options;
  }

  reset(): void {
    this.state = { ...emptyState(this.sizes), mode: this.state.mode };
  }

  /**
   * One update of every parameter tensor with learning rate `lr`. A weight that would leave the
   * float32 range (or become NaN) throws `NonFiniteTrainingError`: the caller must then discard
   * these parameters, which may be partly updated.
   */
  step(params: Float32Array[], grads: readonly Float32Array[], lr: number): void {
    if (params.length !== this.sizes.length || grads.length !== this.sizes.length) throw new RangeError("params and grads must match the optimizer's tensors");
    if (!Number.isFinite(lr)) throw new NonFiniteTrainingError(`the learning rate is not finite (${lr})`);
    this.state.step++;
    const step = this.state.step;
    for (let i = 0; i < params.length; i++) {
      const param = params[i]!;
      const grad = grads[i]!;
      if (param.length !== this.sizes[i] || grad.length !== this.sizes[i]) throw new RangeError(`tensor ${i} has the wrong size`);
      const nonFinite = this.kernels.adamwStep({ params: param, grads: grad, expAvg: this.state.expAvg[i]!, expAvgSq: this.state.expAvgSq[i]!, lr, step, ...this.options });
      if (nonFinite > 0) throw new NonFiniteTrainingError(`${nonFinite} updated weights are not finite at learning rate ${lr}`);
    }
  }

  /** A copy of the state, to persist next to a checkpoint. */
  exportState(): AdamWState {
    return { step: this.state.step, mode: this.state.mode, expAvg: this.state.expAvg.map((m) => m.slice()), expAvgSq: this.state.expAvgSq.map((v) => v.slice()) };
  }
}

function emptyState(sizes: readonly number[]): AdamWState {
  return { step: 0, mode: null, expAvg: sizes.map((size) => new Float32Array(size)), expAvgSq: sizes.map((size) => new Float32Array(size)) };
}

/**
 * Scales all gradients together so their global L2 norm is at most `maxNorm` (coefficient
 * maxNorm / (norm + 1e-6), applied only when below 1). Returns the norm before clipping, which is
 * the `grad_norm` metric. A non-finite norm is an error: stepping on it would destroy the weights.
 */
export function clipGradNorm(grads: Float32Array[], maxNorm: number, kernels: OptimizerKernels = referenceKernels): number {
  let sumSquares = 0;
  for (const grad of grads) sumSquares += kernels.sumOfSquares(grad);
  const norm = Math.sqrt(sumSquares);
  if (!Number.isFinite(norm)) throw new NonFiniteTrainingError(`the gradient norm is not finite (${norm})`);
  const coefficient = maxNorm / (norm + 1e-6);
  if (coefficient < 1) for (const grad of grads) kernels.scale(grad, coefficient);
  return norm;
}
