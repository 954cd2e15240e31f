import type { LinearBackwardArgs, LinearWeightBackwardArgs } from "../types.js";
import type { F32Matrix } from "./matrix.js";

// A linear layer y = x·Wᵀ (+ b): the forward, the input gradient and the weight gradients.

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
      let a0 = 0,
        a1 = 0,
        a2 = 0,
        a3 = 0,
        b0 = 0,
        b1 = 0,
        b2 = 0,
        b3 = 0;
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
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0;
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
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0;
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

/**
 * dx (+)= dy·W for W [out × in]: four rows of dy against four rows of W at a time, each loaded
 * weight feeding four running sums held in doubles (`scratch`, at least 4·in entries).
 */
export function linearBackward(args: LinearBackwardArgs, w: F32Matrix, scratch: Float64Array): void {
  const { dx, dy, rows, accumulate = false } = args;
  const { rows: outDim, cols: inDim, data } = w;
  if (dy.length < rows * outDim) throw new RangeError(`linearBackward: dy holds ${dy.length} values, needs ${rows}×${outDim}`);
  if (dx.length < rows * inDim) throw new RangeError(`linearBackward: dx holds ${dx.length} values, needs ${rows}×${inDim}`);
  const s0 = 0;
  const s1 = inDim;
  const s2 = 2 * inDim;
  const s3 = 3 * inDim;
  for (let r = 0; r < rows; r += 4) {
    const count = Math.min(4, rows - r);
    scratch.fill(0, 0, 4 * inDim);
    const y0 = r * outDim;
    const y1 = count > 1 ? y0 + outDim : -1;
    const y2 = count > 2 ? y0 + 2 * outDim : -1;
    const y3 = count > 3 ? y0 + 3 * outDim : -1;
    let o = 0;
    for (; o + 4 <= outDim; o += 4) {
      const a0 = dy[y0 + o]!,
        a1 = dy[y0 + o + 1]!,
        a2 = dy[y0 + o + 2]!,
        a3 = dy[y0 + o + 3]!;
      const b0 = y1 < 0 ? 0 : dy[y1 + o]!,
        b1 = y1 < 0 ? 0 : dy[y1 + o + 1]!,
        b2 = y1 < 0 ? 0 : dy[y1 + o + 2]!,
        b3 = y1 < 0 ? 0 : dy[y1 + o + 3]!;
      const c0 = y2 < 0 ? 0 : dy[y2 + o]!,
        c1 = y2 < 0 ? 0 : dy[y2 + o + 1]!,
        c2 = y2 < 0 ? 0 : dy[y2 + o + 2]!,
        c3 = y2 < 0 ? 0 : dy[y2 + o + 3]!;
      const d0 = y3 < 0 ? 0 : dy[y3 + o]!,
        d1 = y3 < 0 ? 0 : dy[y3 + o + 1]!,
        d2 = y3 < 0 ? 0 : dy[y3 + o + 2]!,
        d3 = y3 < 0 ? 0 : dy[y3 + o + 3]!;
      const w0 = o * inDim;
      const w1 = w0 + inDim;
      const w2 = w1 + inDim;
      const w3 = w2 + inDim;
      for (let i = 0; i < inDim; i++) {
        const v0 = data[w0 + i]!;
        const v1 = data[w1 + i]!;
        const v2 = data[w2 + i]!;
        const v3 = data[w3 + i]!;
        scratch[s0 + i] += a0 * v0 + a1 * v1 + a2 * v2 + a3 * v3;
        scratch[s1 + i] += b0 * v0 + b1 * v1 + b2 * v2 + b3 * v3;
        scratch[s2 + i] += c0 * v0 + c1 * v1 + c2 * v2 + c3 * v3;
        scratch[s3 + i] += d0 * v0 + d1 * v1 + d2 * v2 + d3 * v3;
      }
    }
    for (; o < outDim; o++) {
      const wo = o * inDim;
      for (let q = 0; q < count; q++) {
        const g = dy[y0 + q * outDim + o]!;
        const s = q * inDim;
        for (let i = 0; i < inDim; i++) scratch[s + i] += g * data[wo + i]!;
      }
    }
    for (let q = 0; q < count; q++) {
      const out = (r + q) * inDim;
      const s = q * inDim;
      if (accumulate) for (let i = 0; i < inDim; i++) dx[out + i] += scratch[s + i]!;
      else for (let i = 0; i < inDim; i++) dx[out + i] = scratch[s + i]!;
    }
  }
}

/**
 * dW += dyᵀ·x (and dBias += Σ_r dy) for W [outDim × inDim]. dy and x are first transposed into
 * `dyT` [outDim × rows] and `xT` [inDim × rows] (scratch), so each dW entry is a dot product of two
 * contiguous runs; tiles of two outputs × four inputs keep eight sums in registers (doubles), as
 * the forward matmul does, and each sum is added to dW once.
 */
export function linearWeightBackward(args: LinearWeightBackwardArgs, dyT: Float32Array, xT: Float32Array): void {
  const { dWeight, dBias, dy, x, rows, outDim, inDim } = args;
  if (dWeight.length < outDim * inDim) throw new RangeError(`linearWeightBackward: dWeight holds ${dWeight.length} values, needs ${outDim}×${inDim}`);
  if (dy.length < rows * outDim || x.length < rows * inDim) throw new RangeError(`linearWeightBackward: dy or x holds fewer than ${rows} rows`);
  transpose(dyT, dy, rows, outDim);
  transpose(xT, x, rows, inDim);
  let o = 0;
  for (; o + 2 <= outDim; o += 2) {
    const ga = o * rows;
    const gb = ga + rows;
    let i = 0;
    for (; i + 4 <= inDim; i += 4) {
      const x0 = i * rows;
      const x1 = x0 + rows;
      const x2 = x1 + rows;
      const x3 = x2 + rows;
      let a0 = 0,
        a1 = 0,
        a2 = 0,
        a3 = 0,
        b0 = 0,
        b1 = 0,
        b2 = 0,
        b3 = 0;
      for (let r = 0; r < rows; r++) {
        const ya = dyT[ga + r]!;
        const yb = dyT[gb + r]!;
        const v0 = xT[x0 + r]!;
        const v1 = xT[x1 + r]!;
        const v2 = xT[x2 + r]!;
        const v3 = xT[x3 + r]!;
        a0 += ya * v0;
        a1 += ya * v1;
        a2 += ya * v2;
        a3 += ya * v3;
        b0 += yb * v0;
        b1 += yb * v1;
        b2 += yb * v2;
        b3 += yb * v3;
      }
      const wa = o * inDim + i;
      const wb = wa + inDim;
      dWeight[wa] += a0;
      dWeight[wa + 1] += a1;
      dWeight[wa + 2] += a2;
      dWeight[wa + 3] += a3;
      dWeight[wb] += b0;
      dWeight[wb + 1] += b1;
      dWeight[wb + 2] += b2;
      dWeight[wb + 3] += b3;
    }
    for (; i < inDim; i++) {
      const xi = i * rows;
      let a = 0;
      let b = 0;
      for (let r = 0; r < rows; r++) {
        a += dyT[ga + r]! * xT[xi + r]!;
        b += dyT[gb + r]! * xT[xi + r]!;
      }
      dWeight[o * inDim + i] += a;
      dWeight[(o + 1) * inDim + i] += b;
    }
  }
  for (; o < outDim; o++) {
    const g = o * rows;
    for (let i = 0; i < inDim; i++) {
      const xi = i * rows;
      let sum = 0;
      for (let r = 0; r < rows; r++) sum += dyT[g + r]! * xT[xi + r]!;
      dWeight[o * inDim + i] += sum;
    }
  }
  if (dBias) addBiasGradient(dBias, dy, rows, outDim);
}

/** dBias[o] += Σ_r dy[r, o], each sum in f64 in row order. */
export function addBiasGradient(dBias: Float32Array, dy: Float32Array, rows: number, outDim: number): void {
  for (let o = 0; o < outDim; o++) {
    let sum = 0;
    for (let r = 0; r < rows; r++) sum += dy[r * outDim + o]!;
    dBias[o] += sum;
  }
}

/** out [cols × rows] = in [rows × cols]ᵀ. */
function transpose(out: Float32Array, input: Float32Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) {
    const from = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = input[from + c]!;
  }
}
