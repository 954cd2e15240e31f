import type { F32Matrix } from "./matrix.js";

/**
 * out[r, o] = Σ_i x[r, i]·w[o, i] (+ bias[o]), in register tiles: four input rows against two
 * weight rows at a time, and single rows (decode) against four weight rows, so every loaded value
 * feeds several independent sums. Sums are kept in doubles and rounded to f32 once.
 */
export function matmul(out: Float32Array, x: Float32Array, rows: number, w: F32Matrix, bias?: Float32Array): void {
  const { rows: outDim, cols: inDim, data: weights } = w;
  if (x.length < rows * inDim) throw new RangeError(`matmul: input holds ${x.length} values, needs ${rows}×${inDim}`);
  if (out.length < rows * outDim) throw new RangeError(`matmul: output holds ${out.length} values, needs ${rows}×${outDim}`);
  let r = 0;
  for (; r + 4 <= rows; r += 4) {
    const x0 = r * inDim;
    const x1 = x0 + inDim;
    const x2 = x1 + inDim;
    const x3 = x2 + inDim;
    let o = 0;
    // A 4 rows × 2 outputs tile: six loads feed eight multiply-adds.
    for (; o + 2 <= outDim; o += 2) {
      const wa = o * inDim;
      const wb = wa + inDim;
      let a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
      for (let i = 0; i < inDim; i++) {
        const wai = weights[wa + i]!;
        const wbi = weights[wb + i]!;
        const v0 = x[x0 + i]!;
        const v1 = x[x1 + i]!;
        const v2 = x[x2 + i]!;
        const v3 = x[x3 + i]!;
        a0 += v0 * wai;
        a1 += v1 * wai;
        a2 += v2 * wai;
        a3 += v3 * wai;
        b0 += v0 * wbi;
        b1 += v1 * wbi;
        b2 += v2 * wbi;
        b3 += v3 * wbi;
      }
      const ba = bias ? bias[o]! : 0;
      const bb = bias ? bias[o + 1]! : 0;
      out[r * outDim + o] = a0 + ba;
      out[(r + 1) * outDim + o] = a1 + ba;
      out[(r + 2) * outDim + o] = a2 + ba;
      out[(r + 3) * outDim + o] = a3 + ba;
      out[r * outDim + o + 1] = b0 + bb;
      out[(r + 1) * outDim + o + 1] = b1 + bb;
      out[(r + 2) * outDim + o + 1] = b2 + bb;
      out[(r + 3) * outDim + o + 1] = b3 + bb;
    }
    for (; o < outDim; o++) {
      const wo = o * inDim;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let i = 0; i < inDim; i++) {
        const wi = weights[wo + i]!;
        s0 += x[x0 + i]! * wi;
        s1 += x[x1 + i]! * wi;
        s2 += x[x2 + i]! * wi;
        s3 += x[x3 + i]! * wi;
      }
      const b = bias ? bias[o]! : 0;
      out[r * outDim + o] = s0 + b;
      out[(r + 1) * outDim + o] = s1 + b;
      out[(r + 2) * outDim + o] = s2 + b;
      out[(r + 3) * outDim + o] = s3 + b;
    }
  }
  for (; r < rows; r++) {
    const xr = r * inDim;
    let o = 0;
    // One row against four weight rows: each input value is loaded once for four outputs.
    for (; o + 4 <= outDim; o += 4) {
      const w0 = o * inDim;
      const w1 = w0 + inDim;
      const w2 = w1 + inDim;
      const w3 = w2 + inDim;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let i = 0; i < inDim; i++) {
        const v = x[xr + i]!;
        s0 += v * weights[w0 + i]!;
        s1 += v * weights[w1 + i]!;
        s2 += v * weights[w2 + i]!;
        s3 += v * weights[w3 + i]!;
      }
      const base = r * outDim + o;
      out[base] = s0 + (bias ? bias[o]! : 0);
      out[base + 1] = s1 + (bias ? bias[o + 1]! : 0);
      out[base + 2] = s2 + (bias ? bias[o + 2]! : 0);
      out[base + 3] = s3 + (bias ? bias[o + 3]! : 0);
    }
    for (; o < outDim; o++) {
      const wo = o * inDim;
      let sum = 0;
      for (let i = 0; i < inDim; i++) sum += x[xr + i]! * weights[wo + i]!;
      out[r * outDim + o] = sum + (bias ? bias[o]! : 0);
    }
  }
}
