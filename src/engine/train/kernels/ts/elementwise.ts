/**
 * Backward of `rmsNorm`: dx_i (+)= r·w_i·dy_i − x_i·r³/D · Σ_j dy_j·w_j·x_j with r = 1/√(mean(x²) + eps),
 * and, with `dWeight`, dw_i += Σ_rows dy_i·x_i·r (summed per row in doubles, then added).
 */
export function rmsNormBackward(dx: Float32Array, dy: Float32Array, x: Float32Array, weight: Float32Array, rows: number, eps: number, accumulate: boolean, dWeight?: Float32Array): void {
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

/** Backward of `embed`: each row's gradient is added to its token's row of the table. */
export function embedBackward(dTable: Float32Array, dOut: Float32Array, ids: ArrayLike<number>, dim: number): void {
  const vocab = dTable.length / dim;
  for (let r = 0; r < ids.length; r++) {
    const id = ids[r]!;
    if (!(id >= 0 && id < vocab)) throw new RangeError(`embedBackward: token id ${id} is outside the table (${vocab} rows)`);
    const to = id * dim;
    const from = r * dim;
    for (let i = 0; i < dim; i++) dTable[to + i] += dOut[from + i]!;
  }
}

/** Backward of `rope`: the transpose of each rotation is the rotation by the opposite angle. */
export function ropeBackward(dx: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void {
  const half = headDim / 2;
  for (let r = 0; r < rows; r++) {
    const table = positions[r]! * half;
    if (table + half > cos.length) throw new RangeError(`ropeBackward: no table entry for position ${positions[r]}`);
    for (let h = 0; h < heads; h++) {
      const offset = (r * heads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const c = cos[table + i]!;
        const s = sin[table + i]!;
        const first = dx[offset + i]!;
        const second = dx[offset + i + half]!;
        dx[offset + i] = first * c + second * s;
        dx[offset + i + half] = second * c - first * s;
      }
    }
  }
}

/** Backward of silu(g)·u: dUp = dOut·silu(g); dGate = dOut·u·σ(g)·(1 + g·(1 − σ(g))). */
export function siluMulBackward(dGate: Float32Array, dUp: Float32Array, dOut: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
  for (let i = 0; i < length; i++) {
    const g = gate[i]!;
    const sigmoid = 1 / (1 + Math.exp(-g));
    const d = dOut[i]!;
    dUp[i] = d * g * sigmoid;
    dGate[i] = d * up[i]! * sigmoid * (1 + g * (1 - sigmoid));
  }
}
