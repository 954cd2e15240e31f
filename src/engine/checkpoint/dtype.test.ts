import { describe, expect, it } from "vitest";
import { bf16BitsToF32, decodeFloats, encodeFloats, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, roundThrough } from "./dtype.js";

describe("f16", () => {
  it("encodes exact values, the largest finite value and signed zero", () => {
    expect(f32ToF16Bits(1)).toBe(0x3c00);
    expect(f32ToF16Bits(-2)).toBe(0xc000);
    expect(f32ToF16Bits(0.5)).toBe(0x3800);
    expect(f32ToF16Bits(65504)).toBe(0x7bff);
    expect(f32ToF16Bits(-0)).toBe(0x8000);
    expect(f16BitsToF32(0x7bff)).toBe(65504);
    expect(Object.is(f16BitsToF32(0x8000), -0)).toBe(true);
  });

  it("rounds to nearest with ties to even, overflowing to infinity", () => {
    // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties go to the even mantissa.
    expect(f32ToF16Bits(1 + 2 ** -11)).toBe(0x3c00);
    expect(f32ToF16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(f32ToF16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01);
    expect(f32ToF16Bits(65520)).toBe(0x7c00);
    expect(f32ToF16Bits(65519)).toBe(0x7bff);
    expect(f32ToF16Bits(Infinity)).toBe(0x7c00);
    expect(f16BitsToF32(0xfc00)).toBe(-Infinity);
  });

  it("handles subnormals and NaN", () => {
    expect(f32ToF16Bits(2 ** -24)).toBe(0x0001);
    expect(f32ToF16Bits(2 ** -25)).toBe(0x0000);
    expect(f32ToF16Bits(3 * 2 ** -25)).toBe(0x0002);
    expect(f32ToF16Bits(2 ** -14 - 2 ** -24)).toBe(0x03ff);
    expect(f16BitsToF32(0x03ff)).toBe(2 ** -14 - 2 ** -24);
    expect(f16BitsToF32(f32ToF16Bits(NaN))).toBeNaN();
  });
});

describe("bf16", () => {
  it("keeps the top 16 bits, rounding to nearest even", () => {
    expect(f32ToBf16Bits(1)).toBe(0x3f80);
    expect(f32ToBf16Bits(-3.5)).toBe(0xc060);
    expect(bf16BitsToF32(0x3f80)).toBe(1);
    expect(f32ToBf16Bits(1 + 2 ** -8)).toBe(0x3f80);
    expect(f32ToBf16Bits(1 + 3 * 2 ** -8)).toBe(0x3f82);
    expect(f32ToBf16Bits(1 + 2 ** -8 + 2 ** -16)).toBe(0x3f81);
    expect(bf16BitsToF32(f32ToBf16Bits(NaN))).toBeNaN();
    expect(f32ToBf16Bits(3.4e38)).toBe(0x7f80);
  });
});

describe("bulk conversion", () => {
  it("round-trips every dtype through little-endian bytes", () => {
    const values = Float32Array.of(0, 1, -1.5, 3.140625, 1e-3, -65504);
    expect([...decodeFloats("F32", encodeFloats("F32", values))]).toEqual([...values]);
    expect(encodeFloats("F16", Float32Array.of(1))).toEqual(Uint8Array.of(0x00, 0x3c));
    expect(encodeFloats("BF16", Float32Array.of(1))).toEqual(Uint8Array.of(0x80, 0x3f));
    const f16 = roundThrough("F16", values);
    for (let i = 0; i < values.length; i++) expect(f16[i]).toBeCloseTo(values[i]!, 3);
    expect(roundThrough("BF16", Float32Array.of(3.140625))[0]).toBe(3.140625);
  });

  it("decodes from an unaligned view", () => {
    const bytes = new Uint8Array(9);
    bytes.set(encodeFloats("F32", Float32Array.of(2, -4)), 1);
    expect([...decodeFloats("F32", bytes.subarray(1))]).toEqual([2, -4]);
  });
});
