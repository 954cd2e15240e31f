import type { ModelConfig } from "../checkpoint/model-config.js";

const f = Math.fround;

/**
 * RoPE inverse frequencies θ^(-2i/d), with Llama 3.1 scaling when configured: wavelengths longer
 * than original_context/low_freq_factor are slowed by `factor`, shorter than
 * original_context/high_freq_factor kept, and those between interpolated smoothly. Computed in
 * f32 step by step, as transformers does, so angles match it bit for bit where it matters.
 */
export function ropeInverseFrequencies(config: ModelConfig): Float32Array {
  const dim = config.headDim;
  const half = dim / 2;
  const inverse = new Float32Array(half);
  for (let i = 0; i < half; i++) inverse[i] = f(1 / f(config.ropeTheta ** f((2 * i) / dim)));
  const scaling = config.ropeScaling;
  if (!scaling) return inverse;
  const { factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings: context } = scaling;
  const lowFreqWavelength = context / lowFreqFactor;
  const highFreqWavelength = context / highFreqFactor;
  for (let i = 0; i < half; i++) {
    const frequency = inverse[i]!;
    const wavelength = f(f(2 * Math.PI) / frequency);
    if (wavelength > lowFreqWavelength) {
      inverse[i] = f(frequency / factor);
    } else if (wavelength >= highFreqWavelength) {
      const smooth = f((f(context / wavelength) - lowFreqFactor) / (highFreqFactor - lowFreqFactor));
      inverse[i] = f(f(f(f(1 - smooth) * frequency) / factor) + f(smooth * frequency));
    }
  }
  return inverse;
}

/** cos/sin of position × frequency for every position below a limit, grown on demand. */
export class RopeTable {
  cos = new Float32Array(0);
  sin = new Float32Array(0);
  private positions = 0;

  constructor(
    private readonly inverseFrequencies: Float32Array,
    private readonly maxPositions: number,
  ) {}

  /** Makes sure positions 0..count-1 are in the table. */
  ensure(count: number): void {
    if (count <= this.positions) return;
    if (count > this.maxPositions) throw new RangeError(`position ${count - 1} is beyond max_position_embeddings (${this.maxPositions})`);
    const target = Math.min(this.maxPositions, Math.max(count, this.positions * 2, 64));
    const half = this.inverseFrequencies.length;
    const cos = new Float32Array(target * half);
    const sin = new Float32Array(target * half);
    cos.set(this.cos);
    sin.set(this.sin);
    for (let p = this.positions; p < target; p++) {
      for (let i = 0; i < half; i++) {
        const angle = f(p * this.inverseFrequencies[i]!);
        cos[p * half + i] = Math.cos(angle);
        sin[p * half + i] = Math.sin(angle);
      }
    }
    this.cos = cos;
    this.sin = sin;
    this.positions = target;
  }
}
