// AVX-512 versions of vector primitives whose results do not depend on the vector width: each
// output element gets the same operations in the same order as in vector_ops_avx2.cc.
#include "vector_ops.h"

#include <algorithm>

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

namespace {

// G of outer_sums' sums over 32 columns from i (lanes0 and lanes1 say which of them exist): a
// register tile of G × 32 chains, so a row's 32 floats are loaded once for G multiply-adds each.
template <int G>
FLYWHEEL_AVX512 void outer_tile(float* sums, const float* coefficients, int count, int j0, const float* rows, int k, int n, int i, __mmask16 lanes0, __mmask16 lanes1) {
  __m512 acc0[G], acc1[G];
#pragma GCC unroll 8
  for (int g = 0; g < G; g++) acc0[g] = acc1[g] = _mm512_setzero_ps();
  for (int p = 0; p < k; p++) {
    const float* c = coefficients + static_cast<size_t>(p) * count + j0;
    // A row whose G coefficients are all zero adds nothing (axpys skips each zero coefficient).
    if (_mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(lanes_left(G), c), _mm512_setzero_ps(), _CMP_NEQ_UQ) == 0) continue;
    const float* x = rows + static_cast<size_t>(p) * n + i;
    const __m512 x0 = _mm512_maskz_loadu_ps(lanes0, x);
    const __m512 x1 = _mm512_maskz_loadu_ps(lanes1, x + 16);
#pragma GCC unroll 8
    for (int g = 0; g < G; g++) {
      const __m512 cv = _mm512_set1_ps(c[g]);
      acc0[g] = _mm512_fmadd_ps(cv, x0, acc0[g]);
      acc1[g] = _mm512_fmadd_ps(cv, x1, acc1[g]);
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < G; g++) {
    float* out = sums + static_cast<size_t>(j0 + g) * n + i;
    _mm512_mask_storeu_ps(out, lanes0, acc0[g]);
    _mm512_mask_storeu_ps(out + 16, lanes1, acc1[g]);
  }
}

}  // namespace

// Each element is axpys' chain: fused multiply-adds in row order from zero, the scalar tail's
// separate multiply and add. A zero coefficient is multiplied in rather than skipped unless its
// whole tile row is zero; for finite rows that changes nothing but, at most, the sign of a zero sum.
FLYWHEEL_AVX512 void outer_sums_avx512(float* sums, const float* coefficients, int count, const float* rows, int k, int n, int begin, int end) {
  const int vector_end = std::min(end, n / 8 * 8);
  for (int i = begin; i < vector_end; i += 32) {
    // The last block may be short, by whole 8-float blocks.
    const int left = vector_end - i;
    const __mmask16 lanes0 = lanes_left(left);
    const __mmask16 lanes1 = lanes_left(left - 16);
    int j = 0;
    for (; j + 8 <= count; j += 8) outer_tile<8>(sums, coefficients, count, j, rows, k, n, i, lanes0, lanes1);
    switch (count - j) {
      case 7: outer_tile<7>(sums, coefficients, count, j, rows, k, n, i, lanes0, lanes1); break;
      case 6: outer_tile<6>(sums, coefficients, count, j, rows, k, n, i, lanes0, lanes1); break;
      case 5: outer_tile<5>(sums, coefficients, count, j, rows, k, n, i, lanes0, lanes1); break;
      case 4: outer_tile<4>(sums, coefficients, count, j, rows, k, n, i, lanes0, lanes1); break;
      case 3: outer_tile<3>(sums, coefficients, count, j, rows, k, n, i, lanes0, lanes1); break;
      case 2: outer_tile<2>(sums, coefficients, count, j, rows, k, n, i, lanes0, lanes1); break;
      case 1: outer_tile<1>(sums, coefficients, count, j, rows, k, n, i, lanes0, lanes1); break;
      default: break;
    }
  }
  for (int i = std::max(begin, n / 8 * 8); i < end; i++) {
    for (int j = 0; j < count; j++) {
      float sum = 0.0f;
      for (int p = 0; p < k; p++) {
        const float c = coefficients[static_cast<size_t>(p) * count + j];
        if (c != 0.0f) sum += c * rows[static_cast<size_t>(p) * n + i];
      }
      sums[static_cast<size_t>(j) * n + i] = sum;
    }
  }
}

// vector_ops_avx2's dots (and dot), 16 floats a step: lanes 0–7 of one 512-bit sum are dot's chain
// s0 (even 8-float blocks) and lanes 8–15 its chain s1 (odd blocks); a last 8-float block goes to
// s0 alone, as there; then dot's horizontal sum of s0 + s1 and its scalar tail. Same bits.
FLYWHEEL_AVX512 void dots_avx512(float* out, const float* a, const float* rows, int count, int n) {
  const auto finish = [&](__m512 s, const float* b) FLYWHEEL_AVX512 {
    const __m256 v = _mm256_add_ps(_mm512_castps512_ps256(s), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
    __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
    sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
    float total = _mm_cvtss_f32(sum);
    for (int t = n / 8 * 8; t < n; t++) total += a[t] * b[t];
    return total;
  };
  const int pairs_end = n / 16 * 16;
  const bool last_block = n - pairs_end >= 8;
  int j = 0;
  for (; j + 4 <= count; j += 4) {
    const float* b[4];
    __m512 s[4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
      b[r] = rows + static_cast<size_t>(j + r) * n;
      s[r] = _mm512_setzero_ps();
    }
    for (int i = 0; i < pairs_end; i += 16) {
      const __m512 av = _mm512_loadu_ps(a + i);
#pragma GCC unroll 4
      for (int r = 0; r < 4; r++) s[r] = _mm512_fmadd_ps(av, _mm512_loadu_ps(b[r] + i), s[r]);
    }
    if (last_block) {
      const __m512 av = _mm512_maskz_loadu_ps(0x00ff, a + pairs_end);
#pragma GCC unroll 4
      for (int r = 0; r < 4; r++) s[r] = _mm512_mask3_fmadd_ps(av, _mm512_maskz_loadu_ps(0x00ff, b[r] + pairs_end), s[r], 0x00ff);
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) out[j + r] = finish(s[r], b[r]);
  }
  for (; j < count; j++) {
    const float* b = rows + static_cast<size_t>(j) * n;
    __m512 s = _mm512_setzero_ps();
    for (int i = 0; i < pairs_end; i += 16) s = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s);
    if (last_block) s = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(0x00ff, a + pairs_end), _mm512_maskz_loadu_ps(0x00ff, b + pairs_end), s, 0x00ff);
    out[j] = finish(s, b);
  }
}

// out[j] = alpha · x[j], or out[j] += alpha · x[j]: a multiply, then an add, per element.
FLYWHEEL_AVX512 void scale_store_avx512(float* out, const float* x, float alpha, int n, bool accumulate) {
  const __m512 av = _mm512_set1_ps(alpha);
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 scaled = _mm512_mul_ps(av, _mm512_loadu_ps(x + j));
    _mm512_storeu_ps(out + j, accumulate ? _mm512_add_ps(_mm512_loadu_ps(out + j), scaled) : scaled);
  }
  for (; j < n; j++) out[j] = accumulate ? out[j] + alpha * x[j] : alpha * x[j];
}

}  // namespace flywheel

#endif
