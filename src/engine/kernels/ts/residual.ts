/** Residual add: x += y. */
export function addInPlace(x: Float32Array, y: Float32Array, length: number): void {
  for (let i = 0; i < length; i++) x[i] += y[i]!;
}
