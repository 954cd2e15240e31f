/**
 * Conversions between f32 and the 16-bit float formats of checkpoints (IEEE half and bfloat16).
 * Narrowing rounds to nearest, ties to even, like PyTorch's `.to(torch.float16 / torch.bfloat16)`.
 * All buffers are little-endian, as safetensors stores them (checked once on load).
 */

export type FloatDType = "F32" | "F16" | "BF16";

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

let halfTable: Float32Array | undefined;

/** Every f16 bit pattern's f32 value (256 KiB, built on first use). */
function halfToFloatTable(): Float32Array {
  if (halfTable) return halfTable;
  halfTable = new Float32Array(65536);
  for (let bits = 0; bits < 65536; bits++) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const mantissa = bits & 0x3ff;
    if (exponent === 0) halfTable[bits] = sign * mantissa * 2 ** -24;
    else if (exponent === 31) halfTable[bits] = mantissa ? NaN : sign * Infinity;
    else halfTable[bits] = sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return halfTable;
}

export function f16BitsToF32(bits: number): number {
  return halfToFloatTable()[bits & 0xffff]!;
}

export function bf16BitsToF32(bits: number): number {
  scratchBits[0] = (bits & 0xffff) << 16;
  return scratch[0]!;
}

export function f32ToF16Bits(value: number): number {
  scratch[0] = value;
  const x = scratchBits[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  const mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 | (mantissa >>> 13) : 0);
  const halfExponent = exponent - 112;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the full significand into place and round.
    if (halfExponent < -10) return sign;
    const significand = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    const halfway = 1 << (shift - 1);
    const rest = significand & ((1 << shift) - 1);
    let result = significand >>> shift;
    if (rest > halfway || (rest === halfway && result & 1)) result++;
    return sign | result;
  }
  let result = sign | (halfExponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  if (rest > 0x1000 || (rest === 0x1000 && result & 1)) result++;
  return result;
}

export function f32ToBf16Bits(value: number): number {
  scratch[0] = value;
  const x = scratchBits[0]!;
  if ((x & 0x7f800000) === 0x7f800000 && x & 0x7fffff) return ((x >>> 16) & 0x8000) | 0x7fc0;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

/** Decodes raw little-endian tensor bytes to f32 (a copy; the input is never aliased). */
export function decodeFloats(dtype: FloatDType, bytes: Uint8Array): Float32Array {
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  if (dtype === "F32") return new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4).slice();
  const halves = new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2);
  const out = new Float32Array(halves.length);
  if (dtype === "BF16") {
    const outBits = new Uint32Array(out.buffer);
    for (let i = 0; i < halves.length; i++) outBits[i] = halves[i]! << 16;
  } else {
    const table = halfToFloatTable();
    for (let i = 0; i < halves.length; i++) out[i] = table[halves[i]!]!;
  }
  return out;
}

/** Encodes f32 values as raw little-endian bytes of `dtype`. */
export function encodeFloats(dtype: FloatDType, values: Float32Array): Uint8Array {
  if (dtype === "F32") return new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));
  const halves = new Uint16Array(values.length);
  const narrow = dtype === "F16" ? f32ToF16Bits : f32ToBf16Bits;
  for (let i = 0; i < values.length; i++) halves[i] = narrow(values[i]!);
  return new Uint8Array(halves.buffer);
}

/** Rounds f32 values through `dtype` and back: what a checkpoint saved in that dtype holds. */
export function roundThrough(dtype: FloatDType, values: Float32Array): Float32Array {
  return decodeFloats(dtype, encodeFloats(dtype, values));
}
