#include "cpu.h"

namespace flywheel {

SimdLevel detect_simd() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
    return __builtin_cpu_supports("avx512f") ? SimdLevel::Avx512 : SimdLevel::Avx2;
  }
#endif
  return SimdLevel::Scalar;
}

bool detect_bf16_products() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return detect_simd() == SimdLevel::Avx512 && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

const char* simd_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::Avx512: return "avx512";
    case SimdLevel::Avx2: return "avx2";
    case SimdLevel::Scalar: return "scalar";
  }
  return "scalar";
}

}  // namespace flywheel
