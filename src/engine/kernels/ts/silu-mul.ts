import type { SiluMulBackwardArgs } from "../types.js";

/** SwiGLU's gate: out = silu(gate)·up. */
export function siluMul(out: Float32Array, gate: Float32Array, up: Float32Array, length: number): void {
  for (let i = 0; i < length; i++) {
    const g = gate[i]!;
    out[i] = (g / (1 + Math.exp(-g))) * up[i]!;
  }
}

/** Backward of silu(g)·u: dUp = dOut·silu(g); dGate = dOut·u·σ(g)·(1 + g·(1 − σ(g))). */
export function siluMulBackward(args: SiluMulBackwardArgs): void {
  const { dGate, dUp, dOut, gate, up, length } = args;
  for (let i = 0; i < length; i++) {
    const g = gate[i]!;
    const sigmoid = 1 / (1 + Math.exp(-g));
    const d = dOut[i]!;
    dUp[i] = d * g * sigmoid;
    dGate[i] = d * up[i]! * sigmoid * (1 + g * (1 - sigmoid));
  }
}
