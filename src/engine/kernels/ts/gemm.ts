import type { GemmOptions } from "../types.js";

/**
 * c (+)= alpha · op(a)·op(b) (see `Kernels.gemm`), summed in doubles (`scratch`, at least
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
