import type { RopeArgs } from "../types.js";

/** Rotates each (i, i + headDim/2) pair of every head by its angle at the row's position. */
export function rope(args: RopeArgs): void {
  rotate(args, "rope", 1);
}

/** Backward of `rope`: the transpose of each rotation is the rotation by the opposite angle. */
export function ropeBackward(args: RopeArgs): void {
  rotate(args, "ropeBackward", -1);
}

function rotate(args: RopeArgs, kernel: string, direction: 1 | -1): void {
  const { x, rows, heads, headDim, positions, cos, sin } = args;
  const half = headDim / 2;
  for (let r = 0; r < rows; r++) {
    const table = positions[r]! * half;
    if (table + half > cos.length) throw new RangeError(`${kernel}: no table entry for position ${positions[r]}`);
    for (let h = 0; h < heads; h++) {
      const offset = (r * heads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const c = cos[table + i]!;
        const s = direction * sin[table + i]!;
        const first = x[offset + i]!;
        const second = x[offset + i + half]!;
        x[offset + i] = first * c - second * s;
        x[offset + i + half] = second * c + first * s;
      }
    }
  }
}
