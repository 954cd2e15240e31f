import type { F32Matrix } from "./matrix.js";

export function embed(out: Float32Array, table: F32Matrix, ids: ArrayLike<number>): void {
  const { rows: vocab, cols: dim, data } = table;
  for (let r = 0; r < ids.length; r++) {
    const id = ids[r]!;
    if (!(id >= 0 && id < vocab)) throw new RangeError(`token id ${id} is outside the embedding (${vocab} rows)`);
    out.set(data.subarray(id * dim, (id + 1) * dim), r * dim);
  }
}

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

export function rope(x: Float32Array, rows: number, heads: number, headDim: number, positions: Int32Array, cos: Float32Array, sin: Float32Array): void {
  const half = headDim / 2;
  for (let r = 0; r < rows; r++) {
    const table = positions[r]! * half;
    if (table + half > cos.length) throw new RangeError(`rope: no table entry for position ${positions[r]}`);
    for (let h = 0; h < heads; h++) {
      const offset = (r * heads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const c = cos[table + i]!;
        const s = sin[table + i]!;
        const first = x[offset + i]!;
        const second = x[offset + i + half]!;
        x[offset + i] = first * c - second * s;
        x[offset + i + half] = second * c + first * s;
      }
    }
  }
}

export function siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
  for (let i = 0; i < length; i++) {
    const g = gate[i]!;
    out[i] = (g / (1 + Math.exp(-g))) * up[i]!;
  }
}

export function addInPlace(x: Float32Array, y: Float32Array, length: number): void {
  for (let i = 0; i < length; i++) x[i] += y[i]!;
}
