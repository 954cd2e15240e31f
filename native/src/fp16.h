// Scalar conversions of the 16-bit float formats checkpoints store (little-endian bit patterns).
#pragma once

#include <cstdint>
#include <cstring>

namespace flywheel {

inline float bf16_to_f32(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// IEEE half to single, exact for every bit pattern (subnormals, infinities, NaN).
inline float f16_to_f32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  uint32_t wide;
  if (exponent == 0x1f) {
    wide = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    wide = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    wide = sign;
  } else {
    // Subnormal half: normalize the mantissa into a single's exponent range.
    int shift = 0;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      shift++;
    }
    wide = sign | (static_cast<uint32_t>(113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

}  // namespace flywheel

namespace flywheel {

// Single to bfloat16, rounding to nearest even; NaN stays NaN.
inline uint16_t f32_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

// Single to IEEE half, rounding to nearest even (overflow to infinity, subnormals kept).
inline uint16_t f32_to_f16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) return sign | 0x7e00;
  if (magnitude >= 0x477ff000) return sign | 0x7c00;  // rounds past the largest half
  if (magnitude < 0x38800000) {
    // Subnormal half (or zero): shift the mantissa, with its hidden bit, into place and round.
    if (magnitude < 0x33000000) return sign;
    const uint32_t exponent = magnitude >> 23;
    const uint32_t mantissa = (magnitude & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - exponent;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1))) half++;
    return sign | static_cast<uint16_t>(half);
  }
  uint32_t rounded = magnitude + 0xfff + ((magnitude >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000) >> 13);
}

}  // namespace flywheel
