import type { AttentionShape } from "../types.js";

/**
 * Causal grouped-query attention (see `Kernels.attention`): per query head, scaled dot products
 * with every visible key, a max-subtracted softmax, then the weighted sum of values. `scores` is
 * scratch space of at least start + rows entries.
 */
export function attention(out: Float32Array, q: Float32Array, rows: number, keys: Float32Array, values: Float32Array, start: number, shape: AttentionShape, scores: Float64Array): void {
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
