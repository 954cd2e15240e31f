import type { AttentionShape } from "../../../kernels/types.js";

/**
 * Backward of causal grouped-query attention (see `TrainingKernels.attentionBackward`). Per query
 * row and head the probabilities P are recomputed as the forward computed them; then with
 * dP_j = dO·v_j and D = Σ_j P_j·dP_j (= dO·O): dS_j = P_j·(dP_j − D), dq = scale·Σ_j dS_j·k_j,
 * dk_j += scale·dS_j·q, dv_j += P_j·dO. `scratch` holds at least 2·(start + rows) + headDim entries.
 */
export function attentionBackward(
  dq: Float32Array,
  dKeys: Float32Array,
  dValues: Float32Array,
  dOut: Float32Array,
  q: Float32Array,
  keys: Float32Array,
  values: Float32Array,
  rows: number,
  start: number,
  shape: AttentionShape,
  scratch: Float64Array,
): void {
  const { heads, kvHeads, headDim } = shape;
  const group = heads / kvHeads;
  const kvStride = kvHeads * headDim;
  const scale = 1 / Math.sqrt(headDim);
  if (keys.length < (start + rows) * kvStride || dKeys.length < (start + rows) * kvStride) throw new RangeError(`attentionBackward: keys hold fewer than ${start + rows} positions`);
  // P_j in scratch[j], dP_j in scratch[dpOffset + j], the row's dq (summed in doubles) at dqOffset.
  const dpOffset = start + rows;
  const dqOffset = 2 * (start + rows);
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
        scratch[j] = score;
        if (score > max) max = score;
      }
      let sum = 0;
      for (let j = 0; j < visible; j++) {
        const weight = Math.exp(scratch[j]! - max);
        scratch[j] = weight;
        sum += weight;
      }
      // D = Σ_j P_j·(dO·v_j); then each position's share.
      let total = 0;
      for (let j = 0; j < visible; j++) {
        const p = scratch[j]! / sum;
        scratch[j] = p;
        const vOffset = j * kvStride + kvOffset;
        let dp = 0;
        for (let d = 0; d < headDim; d++) dp += dOut[qOffset + d]! * values[vOffset + d]!;
        scratch[dpOffset + j] = dp;
        total += p * dp;
      }
      scratch.fill(0, dqOffset, dqOffset + headDim);
      for (let j = 0; j < visible; j++) {
        const p = scratch[j]!;
        const offset = j * kvStride + kvOffset;
        const ds = p * (scratch[dpOffset + j]! - total) * scale;
        for (let d = 0; d < headDim; d++) {
          scratch[dqOffset + d] += ds * keys[offset + d]!;
          dKeys[offset + d] += ds * q[qOffset + d]!;
          dValues[offset + d] += p * dOut[qOffset + d]!;
        }
      }
      for (let d = 0; d < headDim; d++) dq[qOffset + d] = scratch[dqOffset + d]!;
    }
  }
}
