// The softmax pieces of the AVX-512 kernels (attention, forward and backward; the log-softmax's
// gradient): exp on 16 lanes and the largest of a row of scores.
#pragma once

#include <cmath>

#include "simd.h"

#if FLYWHEEL_HAVE_X86

namespace flywheel {

// vector_ops_avx2's exp8 on 16 lanes: the same operations per lane, so the same bits.
FLYWHEEL_AVX512 inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.3f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), _mm512_set1_ps(1.0f));
  const __m512i exponent = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(exponent));
}

// The largest of x[0, n), 16 at a time (a maximum is the same in any order).
FLYWHEEL_AVX512 inline float max16(const float* x, int n) {
  __m512 best = _mm512_set1_ps(-INFINITY);
  for (int i = 0; i < n; i += 16) best = _mm512_mask_max_ps(best, lanes_left(n - i), best, _mm512_maskz_loadu_ps(lanes_left(n - i), x + i));
  return _mm512_reduce_max_ps(best);
}

}  // namespace flywheel

#endif
