import type { RmsNormBackwardArgs } from "../types.js";

/** out = x / √(mean(x²) + eps) · weight, per row; the squares summed in doubles. */
export function rmsNorm(out: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number): void {
  const dim = weight.length;
  for (let r = 0; r < rows; r++) {
    const offset = r * dim;
    let squares = 0;
    for (let i = 0; i < dim; i++) {
      const value = x[offset + i]!;
      squares += value * value;
    }
    const inverse = 1 / Math.sqrt(squares / dim + eps);
    for (let i = 0; i < dim; i++) out[offset + i] = Math.fround(x[offset + i]! * inverse) * weight[i]!;
  }
}

/**
 * Backward of `rmsNorm`: dx_i (+)= r·w_i·dy_i − x_i·r³/D · Σ_j dy_j·w_j·x_j with r = 1/√(mean(x²) + eps),
 * and, with `dWeight`, dw_i += Σ_rows dy_i·x_i·r (summed per row in doubles, then added).
 */
export function rmsNormBackward(args: RmsNormBackwardArgs): void {
  const { dx, dy, x, weight, rows, eps, accumulate = false, dWeight } = args;
  const dim = weight.length;
  for (let r = 0; r < rows; r++) {
    const offset = r * dim;
    let squares = 0;
    let dot = 0;
    for (let i = 0; i < dim; i++) {
      const value = x[offset + i]!;
      squares += value * value;
      dot += dy[offset + i]! * weight[i]! * value;
    }
    const inverse = 1 / Math.sqrt(squares / dim + eps);
    const correction = (inverse * inverse * inverse * dot) / dim;
    if (dWeight) for (let i = 0; i < dim; i++) dWeight[i] += dy[offset + i]! * x[offset + i]! * inverse;
    for (let i = 0; i < dim; i++) {
      const gradient = inverse * weight[i]! * dy[offset + i]! - x[offset + i]! * correction;
      if (accumulate) dx[offset + i] += gradient;
      else dx[offset + i] = gradient;
    }
  }
}
