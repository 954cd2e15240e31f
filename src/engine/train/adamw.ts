/**
 * AdamW (decoupled weight decay, bias-corrected moments) exactly as PyTorch's `torch.optim.AdamW`
 * computes it, and global gradient-norm clipping as `clip_grad_norm_` (`spec/training.md` §5.5,
 * §7). Parameters and gradients are lists of Float32Array (one per tensor); the math runs in
 * double precision and is stored back as float32.
 */
import { NonFiniteTrainingError } from "./errors.js";

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

export class AdamW {
  private state: AdamWState;

  constructor(
    private readonly sizes: readonly number[],
    private options: AdamWOptions = OPTIMIZER_SETTINGS.rl,
    state?: AdamWState,
  ) {
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
    const { beta1, beta2, eps, weightDecay } = this.options;
    this.state.step++;
    const step = this.state.step;
    const stepSize = lr / (1 - beta1 ** step);
    const biasCorrection2Sqrt = Math.sqrt(1 - beta2 ** step);
    const decay = 1 - lr * weightDecay;
    for (let i = 0; i < params.length; i++) {
      const param = params[i]!;
      const grad = grads[i]!;
      const m = this.state.expAvg[i]!;
      const v = this.state.expAvgSq[i]!;
      if (param.length !== this.sizes[i] || grad.length !== this.sizes[i]) throw new RangeError(`tensor ${i} has the wrong size`);
      for (let j = 0; j < param.length; j++) {
        const g = grad[j]!;
        const mj = beta1 * m[j]! + (1 - beta1) * g;
        const vj = beta2 * v[j]! + (1 - beta2) * g * g;
        m[j] = mj;
        v[j] = vj;
        const updated = Math.fround(param[j]! * decay - (stepSize * mj) / (Math.sqrt(vj) / biasCorrection2Sqrt + eps));
        if (!Number.isFinite(updated)) throw new NonFiniteTrainingError(`the updated weights are not finite (${updated}) at learning rate ${lr}`);
        param[j] = updated;
      }
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
export function clipGradNorm(grads: Float32Array[], maxNorm: number): number {
  let sumSquares = 0;
  for (const grad of grads) for (let j = 0; j < grad.length; j++) sumSquares += grad[j]! * grad[j]!;
  const norm = Math.sqrt(sumSquares);
  if (!Number.isFinite(norm)) throw new NonFiniteTrainingError(`the gradient norm is not finite (${norm})`);
  const coefficient = maxNorm / (norm + 1e-6);
  if (coefficient < 1) {
    for (const grad of grads) for (let j = 0; j < grad.length; j++) grad[j] = grad[j]! * coefficient;
  }
  return norm;
}
