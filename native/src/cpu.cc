#include "cpu.h"

namespace flywheel {

SimdLevel detect_simd() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
    return SimdLevel::Avx2;
  }
#endif
  return SimdLevel::Scalar;
}

const char* simd_name(SimdLevel level) {
  return level == SimdLevel::Avx2 ? "avx2" : "scalar";
}

}  // namespace flywheel
