import { bf16BitsToF32, f32ToBf16Bits } from "../../checkpoint/dtype.js";

/** A copy of `values`, each rounded to bf16 (nearest even): the operands of the "bf16" backward's products. */
export function roundedToBf16(values: Float32Array): Float32Array {
  const rounded = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) rounded[i] = bf16BitsToF32(f32ToBf16Bits(values[i]!));
  return rounded;
}
