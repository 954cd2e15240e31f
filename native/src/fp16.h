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
