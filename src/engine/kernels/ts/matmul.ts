import type { F32Matrix } from "./matrix.js";

/**
 * out[r, o] = Σ_i x[r, i]·w[o, i] (+ bias[o]). Four input rows share each pass over a weight row,
 * so the weight streams through the cache once per four rows; four accumulators per dot product
 * break the dependency chain. Sums are kept in doubles and rounded to f32 once.
 */
export function matmul(out: Float32Array, x: Float32Array, rows: number, w: F32Matrix, bias?: Float32Array): void {
  const { rows: outDim, cols: inDim, data: weights } = w;
  if (x.length < rows * inDim) throw new RangeError(`matmul: input holds ${x.length} values, needs ${rows}×${inDim}`);
  if (out.length < rows * outDim) throw new RangeError(`matmul: output holds ${out.length} values, needs ${rows}×${outDim}`);
  const tail = inDim & ~3;
  let r = 0;
  for (; r + 4 <= rows; r += 4) {
    const x0 = r * inDim;
    const x1 = x0 + inDim;
    const x2 = x1 + inDim;
    const x3 = x2 + inDim;
    for (let o = 0; o < outDim; o++) {
      const wo = o * inDim;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
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
    for (let o = 0; o < outDim; o++) {
      const wo = o * inDim;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let i = 0;
      for (; i < tail; i += 4) {
        s0 += x[xr + i]! * weights[wo + i]!;
        s1 += x[xr + i + 1]! * weights[wo + i + 1]!;
        s2 += x[xr + i + 2]! * weights[wo + i + 2]!;
        s3 += x[xr + i + 3]! * weights[wo + i + 3]!;
      }
      for (; i < inDim; i++) s0 += x[xr + i]! * weights[wo + i]!;
      out[r * outDim + o] = s0 + s1 + s2 + s3 + (bias ? bias[o]! : 0);
    }
  }
}
