/** Σ x², summed in doubles in index order. */
export function sumOfSquares(x: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i]! * x[i]!;
  return sum;
}

/** x *= factor. */
export function scale(x: Float32Array, factor: number): void {
  for (let i = 0; i < x.length; i++) x[i] = x[i]! * factor;
}
