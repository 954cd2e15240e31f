// AVX-512 versions of vector primitives whose results do not depend on the vector width: each
// output element gets the same operations in the same order as in vector_ops_avx2.cc.
#include "vector_ops.h"

#include "simd.h"

#if FLYWHEEL_HAVE_X86

namespace flywheel {

// vector_ops_avx2's axpys, 64 floats a step: every element of its vector part (the largest multiple
// of 8 below n) is one fused multiply-add chain over the nonzero coefficients from zero, whatever
// the width; its scalar tail (separate multiply and add) is kept as is.
FLYWHEEL_AVX512 void axpys_avx512(float* y, const float* coefficients, const float* rows, int count, int n) {
  const int vector_end = n / 8 * 8;
  int i = 0;
  for (; i + 64 <= vector_end; i += 64) {
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (int p = 0; p < count; p++) {
      if (coefficients[p] == 0.0f) continue;
      const __m512 av = _mm512_set1_ps(coefficients[p]);
      const float* x = rows + static_cast<size_t>(p) * n + i;
#pragma GCC unroll 4
      for (int v = 0; v < 4; v++) acc[v] = _mm512_fmadd_ps(av, _mm512_loadu_ps(x + 16 * v), acc[v]);
    }
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) _mm512_storeu_ps(y + i + 16 * v, acc[v]);
  }
  for (; i < vector_end; i += 16) {
    // 16 floats, or the last 8.
    const __mmask16 lanes = vector_end - i >= 16 ? 0xffff : 0x00ff;
    __m512 acc = _mm512_setzero_ps();
    for (int p = 0; p < count; p++) {
      if (coefficients[p] != 0.0f) acc = _mm512_fmadd_ps(_mm512_set1_ps(coefficients[p]), _mm512_maskz_loadu_ps(lanes, rows + static_cast<size_t>(p) * n + i), acc);
    }
    _mm512_mask_storeu_ps(y + i, lanes, acc);
  }
  for (i = vector_end; i < n; i++) {
    float sum = 0.0f;
    for (int p = 0; p < count; p++) {
      if (coefficients[p] != 0.0f) sum += coefficients[p] * rows[static_cast<size_t>(p) * n + i];
    }
    y[i] = sum;
  }
}

}  // namespace flywheel

#endif
