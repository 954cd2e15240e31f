import { bf16BitsToF32, f32ToBf16Bits } from "../../checkpoint/dtype.js";

/**
 * `values`, each rounded to bf16 (nearest even): the operands of the "bf16" products. Written to
 * `into` (at least as long; returned as a view of that length) or to a new array.
 */
export function roundedToBf16(values: Float32Array, into?: Float32Array): Float32Array {
  const rounded = into ? into.subarray(0, values.length) : new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) rounded[i] = bf16BitsToF32(f32ToBf16Bits(values[i]!));
  return rounded;
}
