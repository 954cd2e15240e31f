import type { F32Matrix } from "../../../kernels/ts/matrix.js";
import type { GemmOptions } from "../types.js";

/**
 * dx (+)= dy·W for W [out × in]: four rows of dy against four rows of W at a time, each loaded
 * weight feeding four running sums held in doubles (`scratch`, at least 4·in entries).
 */
export function linearBackward(dx: Float32Array, dy: Float32Array, rows: number, w: F32Matrix, accumulate: boolean, scratch: Float64Array): void {
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
      const a0 = dy[y0 + o]!, a1 = dy[y0 + o + 1]!, a2 = dy[y0 + o + 2]!, a3 = dy[y0 + o + 3]!;
      const b0 = y1 < 0 ? 0 : dy[y1 + o]!, b1 = y1 < 0 ? 0 : dy[y1 + o + 1]!, b2 = y1 < 0 ? 0 : dy[y1 + o + 2]!, b3 = y1 < 0 ? 0 : dy[y1 + o + 3]!;
      const c0 = y2 < 0 ? 0 : dy[y2 + o]!, c1 = y2 < 0 ? 0 : dy[y2 + o + 1]!, c2 = y2 < 0 ? 0 : dy[y2 + o + 2]!, c3 = y2 < 0 ? 0 : dy[y2 + o + 3]!;
      const d0 = y3 < 0 ? 0 : dy[y3 + o]!, d1 = y3 < 0 ? 0 : dy[y3 + o + 1]!, d2 = y3 < 0 ? 0 : dy[y3 + o + 2]!, d3 = y3 < 0 ? 0 : dy[y3 + o + 3]!;
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
 * dW += dyᵀ·x (and dBias += Σ_r dy) for W [outDim × inDim]: four output rows at a time, each
 * loaded input value feeding four running sums held in doubles (`scratch`, at least 4·inDim
 * entries), added to dW once per block, so the result does not depend on how rows are chunked
 * beyond float rounding of that final add.
 */
export function linearWeightBackward(dWeight: Float32Array, dBias: Float32Array | undefined, dy: Float32Array, x: Float32Array, rows: number, outDim: number, inDim: number, scratch: Float64Array): void {
  if (dWeight.length < outDim * inDim) throw new RangeError(`linearWeightBackward: dWeight holds ${dWeight.length} values, needs ${outDim}×${inDim}`);
  if (dy.length < rows * outDim || x.length < rows * inDim) throw new RangeError(`linearWeightBackward: dy or x holds fewer than ${rows} rows`);
  for (let o = 0; o < outDim; o += 4) {
    const count = Math.min(4, outDim - o);
    scratch.fill(0, 0, 4 * inDim);
    for (let r = 0; r < rows; r++) {
      const y = r * outDim + o;
      const g0 = dy[y]!;
      const g1 = count > 1 ? dy[y + 1]! : 0;
      const g2 = count > 2 ? dy[y + 2]! : 0;
      const g3 = count > 3 ? dy[y + 3]! : 0;
      if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0) continue;
      const xr = r * inDim;
      for (let i = 0; i < inDim; i++) {
        const value = x[xr + i]!;
        scratch[i] += g0 * value;
        scratch[inDim + i] += g1 * value;
        scratch[2 * inDim + i] += g2 * value;
        scratch[3 * inDim + i] += g3 * value;
      }
    }
    for (let q = 0; q < count; q++) {
      const out = (o + q) * inDim;
      const s = q * inDim;
      for (let i = 0; i < inDim; i++) dWeight[out + i] += scratch[s + i]!;
    }
  }
  if (!dBias) return;
  for (let o = 0; o < outDim; o++) {
    let sum = 0;
    for (let r = 0; r < rows; r++) sum += dy[r * outDim + o]!;
    dBias[o] += sum;
  }
}

/**
 * c (+)= alpha · op(a)·op(b) (see `TrainingKernels.gemm`), summed in doubles (`scratch`, at least
 * m·n entries). Loop orders keep the innermost loop on contiguous memory for every transpose case.
 */
export function gemm(c: Float32Array, a: Float32Array, b: Float32Array, m: number, n: number, k: number, options: GemmOptions, scratch: Float64Array): void {
  const { transposeA = false, transposeB = false, alpha = 1, accumulate = false } = options;
  if (a.length < m * k || b.length < k * n || c.length < m * n) throw new RangeError(`gemm: buffers too small for [${m} × ${k}]·[${k} × ${n}]`);
  const sums = scratch;
  sums.fill(0, 0, m * n);
  if (!transposeA && !transposeB) {
    for (let i = 0; i < m; i++) {
      for (let p = 0; p < k; p++) {
        const value = a[i * k + p]!;
        if (value === 0) continue;
        const row = p * n;
        const out = i * n;
        for (let j = 0; j < n; j++) sums[out + j] += value * b[row + j]!;
      }
    }
  } else if (!transposeA && transposeB) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let p = 0; p < k; p++) sum += a[i * k + p]! * b[j * k + p]!;
        sums[i * n + j] = sum;
      }
    }
  } else if (transposeA && !transposeB) {
    for (let p = 0; p < k; p++) {
      const row = p * n;
      for (let i = 0; i < m; i++) {
        const value = a[p * m + i]!;
        if (value === 0) continue;
        const out = i * n;
        for (let j = 0; j < n; j++) sums[out + j] += value * b[row + j]!;
      }
    }
  } else {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let p = 0; p < k; p++) sum += a[p * m + i]! * b[j * k + p]!;
        sums[i * n + j] = sum;
      }
    }
  }
  if (accumulate) for (let i = 0; i < m * n; i++) c[i] += alpha * sums[i]!;
  else for (let i = 0; i < m * n; i++) c[i] = alpha * sums[i]!;
}
