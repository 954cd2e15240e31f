import type { AttentionArgs, AttentionBackwardArgs } from "../types.js";

/**
 * Causal grouped-query attention (see `Kernels.attention`): per query head, scaled dot products
 * with every visible key, a max-subtracted softmax, then the weighted sum of values. `scores` is
 * scratch space of at least start + rows entries.
 */
export function attention(args: AttentionArgs, scores: Float64Array): void {
  const { out, q, rows, keys, values, start, shape } = args;
  const { heads, kvHeads, headDim } = shape;
  const group = heads / kvHeads;
  const kvStride = kvHeads * headDim;
  const scale = 1 / Math.sqrt(headDim);
  if (keys.length < (start + rows) * kvStride) throw new RangeError(`attention: the cache holds fewer than ${start + rows} positions`);
  for (let r = 0; r < rows; r++) {
    const visible = start + r + 1;
    for (let h = 0; h < heads; h++) {
      const qOffset = (r * heads + h) * headDim;
      const kvOffset = Math.floor(h / group) * headDim;
      let max = -Infinity;
      for (let j = 0; j < visible; j++) {
        const kOffset = j * kvStride + kvOffset;
        let dot = 0;
        for (let d = 0; d < headDim; d++) dot += q[qOffset + d]! * keys[kOffset + d]!;
        const score = dot * scale;
        scores[j] = score;
        if (score > max) max = score;
      }
      let sum = 0;
      for (let j = 0; j < visible; j++) {
        const weight = Math.exp(scores[j]! - max);
        scores[j] = weight;
        sum += weight;
      }
      const outOffset = qOffset;
      for (let d = 0; d < headDim; d++) out[outOffset + d] = 0;
      for (let j = 0; j < visible; j++) {
        const weight = scores[j]! / sum;
        const vOffset = j * kvStride + kvOffset;
        for (let d = 0; d < headDim; d++) out[outOffset + d] += weight * values[vOffset + d]!;
      }
    }
  }
}

/** Query rows handled together: their P and dS rows are kept, so keys' gradients are summed per block. */
const BLOCK = 32;

/** Scratch the backward needs for a run of `visible` positions and head size `headDim`. */
export function attentionBackwardScratchSize(visible: number, headDim: number): number {
  return 2 * BLOCK * visible + 3 * headDim;
}

/**
 * Backward of causal grouped-query attention (see `Kernels.attentionBackward`). For each
 * query head and each block of query rows, the probabilities P are recomputed as the forward
 * computed them and, with dP_j = dO·v_j and D = Σ_j P_j·dP_j, turned into dS_j = P_j·(dP_j − D):
 *
 *   dq = scale·Σ_j dS_j·k_j      dk_j += scale·Σ_r dS_rj·q_r      dv_j += Σ_r P_rj·dO_r
 *
 * Key gradients are summed over the block's rows before they are added, and the inner loops take
 * four keys or four rows at a time so each loaded value feeds several sums. `scratch` holds at
 * least `attentionBackwardScratchSize(start + rows, headDim)` doubles.
 */
export function attentionBackward(args: AttentionBackwardArgs, scratch: Float64Array): void {
  const { dq, dKeys, dValues, dOut, q, keys, values, rows, start, shape } = args;
  const { heads, kvHeads, headDim } = shape;
  const group = heads / kvHeads;
  const kvStride = kvHeads * headDim;
  const qStride = heads * headDim;
  const scale = 1 / Math.sqrt(headDim);
  const width = start + rows;
  if (keys.length < width * kvStride || dKeys.length < width * kvStride) throw new RangeError(`attentionBackward: keys hold fewer than ${width} positions`);
  // Layout of scratch: P block [BLOCK × width], dS block [BLOCK × width], then three head-sized sums.
  const pBase = 0;
  const sBase = BLOCK * width;
  const acc0 = 2 * BLOCK * width;
  const acc1 = acc0 + headDim;
  const acc2 = acc1 + headDim;

  for (let h = 0; h < heads; h++) {
    const kvOffset = Math.floor(h / group) * headDim;
    const qHead = h * headDim;
    for (let first = 0; first < rows; first += BLOCK) {
      const count = Math.min(BLOCK, rows - first);
      for (let b = 0; b < count; b++) {
        const r = first + b;
        const visible = start + r + 1;
        const qOffset = r * qStride + qHead;
        const pRow = pBase + b * width;
        const sRow = sBase + b * width;
        // Scores and dP_j = dO·v_j, four keys at a time.
        let max = -Infinity;
        let j = 0;
        for (; j + 4 <= visible; j += 4) {
          const k0 = j * kvStride + kvOffset;
          const k1 = k0 + kvStride;
          const k2 = k1 + kvStride;
          const k3 = k2 + kvStride;
          let s0 = 0,
            s1 = 0,
            s2 = 0,
            s3 = 0,
            d0 = 0,
            d1 = 0,
            d2 = 0,
            d3 = 0;
          for (let d = 0; d < headDim; d++) {
            const qd = q[qOffset + d]!;
            const od = dOut[qOffset + d]!;
            s0 += qd * keys[k0 + d]!;
            s1 += qd * keys[k1 + d]!;
            s2 += qd * keys[k2 + d]!;
            s3 += qd * keys[k3 + d]!;
            d0 += od * values[k0 + d]!;
            d1 += od * values[k1 + d]!;
            d2 += od * values[k2 + d]!;
            d3 += od * values[k3 + d]!;
          }
          s0 *= scale;
          s1 *= scale;
          s2 *= scale;
          s3 *= scale;
          scratch[pRow + j] = s0;
          scratch[pRow + j + 1] = s1;
          scratch[pRow + j + 2] = s2;
          scratch[pRow + j + 3] = s3;
          scratch[sRow + j] = d0;
          scratch[sRow + j + 1] = d1;
          scratch[sRow + j + 2] = d2;
          scratch[sRow + j + 3] = d3;
          max = Math.max(max, s0, s1, s2, s3);
        }
        for (; j < visible; j++) {
          const k0 = j * kvStride + kvOffset;
          let s = 0;
          let dp = 0;
          for (let d = 0; d < headDim; d++) {
            s += q[qOffset + d]! * keys[k0 + d]!;
            dp += dOut[qOffset + d]! * values[k0 + d]!;
          }
          s *= scale;
          scratch[pRow + j] = s;
          scratch[sRow + j] = dp;
          if (s > max) max = s;
        }
        let sum = 0;
        for (j = 0; j < visible; j++) {
          const weight = Math.exp(scratch[pRow + j]! - max);
          scratch[pRow + j] = weight;
          sum += weight;
        }
        let total = 0;
        for (j = 0; j < visible; j++) {
          const p = scratch[pRow + j]! / sum;
          scratch[pRow + j] = p;
          total += p * scratch[sRow + j]!;
        }
        // dS (scaled) in place of dP; dq = Σ_j dS_j·k_j.
        scratch.fill(0, acc0, acc0 + headDim);
        for (j = 0; j < visible; j++) scratch[sRow + j] = scratch[pRow + j]! * (scratch[sRow + j]! - total) * scale;
        for (j = 0; j + 4 <= visible; j += 4) {
          const k0 = j * kvStride + kvOffset;
          const k1 = k0 + kvStride;
          const k2 = k1 + kvStride;
          const k3 = k2 + kvStride;
          const g0 = scratch[sRow + j]!,
            g1 = scratch[sRow + j + 1]!,
            g2 = scratch[sRow + j + 2]!,
            g3 = scratch[sRow + j + 3]!;
          for (let d = 0; d < headDim; d++) scratch[acc0 + d] += g0 * keys[k0 + d]! + g1 * keys[k1 + d]! + g2 * keys[k2 + d]! + g3 * keys[k3 + d]!;
        }
        for (; j < visible; j++) {
          const k0 = j * kvStride + kvOffset;
          const g = scratch[sRow + j]!;
          for (let d = 0; d < headDim; d++) scratch[acc0 + d] += g * keys[k0 + d]!;
        }
        for (let d = 0; d < headDim; d++) dq[qOffset + d] = scratch[acc0 + d]!;
      }
      // dk_j and dv_j over the block's rows that see position j (row b sees j ≤ start + first + b).
      const blockVisible = start + first + count;
      for (let j = 0; j < blockVisible; j++) {
        const firstRow = Math.max(0, j - start - first);
        scratch.fill(0, acc1, acc2 + headDim);
        let b = firstRow;
        for (; b + 4 <= count; b += 4) {
          const q0 = (first + b) * qStride + qHead;
          const q1 = q0 + qStride;
          const q2 = q1 + qStride;
          const q3 = q2 + qStride;
          const g0 = scratch[sBase + b * width + j]!,
            g1 = scratch[sBase + (b + 1) * width + j]!,
            g2 = scratch[sBase + (b + 2) * width + j]!,
            g3 = scratch[sBase + (b + 3) * width + j]!;
          const p0 = scratch[pBase + b * width + j]!,
            p1 = scratch[pBase + (b + 1) * width + j]!,
            p2 = scratch[pBase + (b + 2) * width + j]!,
            p3 = scratch[pBase + (b + 3) * width + j]!;
          for (let d = 0; d < headDim; d++) {
            scratch[acc1 + d] += g0 * q[q0 + d]! + g1 * q[q1 + d]! + g2 * q[q2 + d]! + g3 * q[q3 + d]!;
            scratch[acc2 + d] += p0 * dOut[q0 + d]! + p1 * dOut[q1 + d]! + p2 * dOut[q2 + d]! + p3 * dOut[q3 + d]!;
          }
        }
        for (; b < count; b++) {
          const q0 = (first + b) * qStride + qHead;
          const g = scratch[sBase + b * width + j]!;
          const p = scratch[pBase + b * width + j]!;
          for (let d = 0; d < headDim; d++) {
            scratch[acc1 + d] += g * q[q0 + d]!;
            scratch[acc2 + d] += p * dOut[q0 + d]!;
          }
        }
        const kv = j * kvStride + kvOffset;
        for (let d = 0; d < headDim; d++) {
          dKeys[kv + d] += scratch[acc1 + d]!;
          dValues[kv + d] += scratch[acc2 + d]!;
        }
      }
    }
  }
}
