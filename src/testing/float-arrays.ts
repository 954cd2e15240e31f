import type { Rng } from "../engine/sampling/rng.js";

/** `length` values drawn uniformly from [-1, 1). */
export function randomArray(rng: Rng, length: number): Float32Array {
  return Float32Array.from({ length }, () => 2 * rng.nextFloat() - 1);
}

/** Largest |a − b| over the largest |b|: a product's error beside its scale. */
export function relativeError(actual: Float32Array, expected: Float32Array): number {
  let worst = 0;
  let scale = 0;
  for (let i = 0; i < expected.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
    scale = Math.max(scale, Math.abs(expected[i]!));
  }
  return worst / scale;
}

/** Whether two arrays hold the same bits (unlike comparing values: -0 is not 0, and NaN equals a NaN of the same bits). */
export function sameBits(a: Float32Array, b: Float32Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}
