// AVX-512 versions of vector primitives whose results do not depend on the vector width: each
// output element gets the same operations in the same order as in vector_ops_avx2.cc.
#include "vector_ops.h"

#include <algorithm>

#include "simd.h"

#if FLYWHEEL_HAVE_X86

namespace flywheel {

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

namespace {

// dots' horizontal sum of one chain pair (lanes 0–7 and 8–15), then its scalar tail over a and b.
FLYWHEEL_AVX512 inline float dot_finish(__m512 s, const float* a, const float* b, int n) {
  const __m256 v = _mm256_add_ps(_mm512_castps512_ps256(s), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  float total = _mm_cvtss_f32(sum);
  for (int t = n / 8 * 8; t < n; t++) total += a[t] * b[t];
  return total;
}

// sums[r · ld + j] = dots' result for row r of `a` and row j of `b` (both n long), R × J of them
// at once: each 16-float step loads R + J vectors for R · J multiply-adds.
template <int R, int J>
FLYWHEEL_AVX512 void dot_tile(float* sums, size_t ld, const float* a, const float* b, int n) {
  const int pairs_end = n / 16 * 16;
  __m512 s[R][J];
#pragma GCC unroll 4
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int j = 0; j < J; j++) s[r][j] = _mm512_setzero_ps();
  }
  const auto step = [&](int i, __mmask16 lanes) FLYWHEEL_AVX512 {
    __m512 bv[J];
#pragma GCC unroll 4
    for (int j = 0; j < J; j++) bv[j] = _mm512_maskz_loadu_ps(lanes, b + static_cast<size_t>(j) * n + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const __m512 av = _mm512_maskz_loadu_ps(lanes, a + static_cast<size_t>(r) * n + i);
#pragma GCC unroll 4
      for (int j = 0; j < J; j++) s[r][j] = _mm512_mask3_fmadd_ps(av, bv[j], s[r][j], lanes);
    }
  };
  for (int i = 0; i < pairs_end; i += 16) step(i, 0xFFFF);
  if (n - pairs_end >= 8) step(pairs_end, 0x00FF);
#pragma GCC unroll 4
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int j = 0; j < J; j++) sums[r * ld + j] = dot_finish(s[r][j], a + static_cast<size_t>(r) * n, b + static_cast<size_t>(j) * n, n);
  }
}

// R rows' axpys over V 16-float vectors of columns from `col` (the last vector's `lanes` of them),
// stored as scale_store_avx512 stores: c[r · ldc + col ..] = alpha · sum (or += it). A zero
// coefficient is skipped by its mask, as axpys skips it.
template <int R, int V>
FLYWHEEL_AVX512 void axpy_tile(float* c, size_t ldc, const float* coefficients, const float* b, int k, int n, int col, __mmask16 lanes,
                               float alpha, bool accumulate) {
  __m512 acc[R][V];
#pragma GCC unroll 4
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) acc[r][v] = _mm512_setzero_ps();
  }
  for (int p = 0; p < k; p++) {
    const float* row = b + static_cast<size_t>(p) * n + col;
    __m512 x[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) x[v] = _mm512_maskz_loadu_ps(v == V - 1 ? lanes : 0xFFFF, row + 16 * v);
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const float coefficient = coefficients[static_cast<size_t>(r) * k + p];
      const __mmask16 live = coefficient != 0.0f ? 0xFFFF : 0;
      const __m512 cv = _mm512_set1_ps(coefficient);
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) acc[r][v] = _mm512_mask3_fmadd_ps(cv, x[v], acc[r][v], live);
    }
  }
  const __m512 av = _mm512_set1_ps(alpha);
#pragma GCC unroll 4
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) {
      const __mmask16 store = v == V - 1 ? lanes : 0xFFFF;
      float* out = c + static_cast<size_t>(r) * ldc + col + 16 * v;
      __m512 scaled = _mm512_mul_ps(av, acc[r][v]);
      if (accumulate) scaled = _mm512_add_ps(_mm512_maskz_loadu_ps(store, out), scaled);
      _mm512_mask_storeu_ps(out, store, scaled);
    }
  }
}

// R rows of row_axpys_avx512: 64-float tiles, then 16-float steps (the last by whole 8-float
// blocks), then axpys' scalar tail with scale_store's scalar store.
template <int R>
FLYWHEEL_AVX512 void axpy_rows(float* c, const float* coefficients, const float* b, int n, int k, float alpha, bool accumulate) {
  const int vector_end = n / 8 * 8;
  int col = 0;
  for (; col + 64 <= vector_end; col += 64) axpy_tile<R, 4>(c, n, coefficients, b, k, n, col, 0xFFFF, alpha, accumulate);
  for (; col < vector_end; col += 16) axpy_tile<R, 1>(c, n, coefficients, b, k, n, col, lanes_left(vector_end - col), alpha, accumulate);
  for (int r = 0; r < R; r++) {
    for (int j = vector_end; j < n; j++) {
      float sum = 0.0f;
      for (int p = 0; p < k; p++) {
        const float coefficient = coefficients[static_cast<size_t>(r) * k + p];
        if (coefficient != 0.0f) sum += coefficient * b[static_cast<size_t>(p) * n + j];
      }
      float* out = c + static_cast<size_t>(r) * n + j;
      *out = accumulate ? *out + alpha * sum : alpha * sum;
    }
  }
}

// vector_ops_avx2's dots (and dot), 16 floats a step: lanes 0–7 of one 512-bit sum are dot's chain
// s0 (even 8-float blocks) and lanes 8–15 its chain s1 (odd blocks); a last 8-float block goes to
// s0 alone, as there; then dot's horizontal sum of s0 + s1 and its scalar tail. Same bits.
FLYWHEEL_AVX512 void dots_alone(float* out, const float* a, const float* rows, int count, int n) {
  int j = 0;
  for (; j + 4 <= count; j += 4) dot_tile<1, 4>(out + j, 0, a, rows + static_cast<size_t>(j) * n, n);
  for (; j < count; j++) dot_tile<1, 1>(out + j, 0, a, rows + static_cast<size_t>(j) * n, n);
}

}  // namespace

FLYWHEEL_AVX512 void row_dots_avx512(float* c, const float* a, const float* b, int n, int k, int begin, int end, float alpha, bool accumulate,
                                     float* sums) {
  int i = begin;
  for (; i + 4 <= end; i += 4) {
    const float* rows = a + static_cast<size_t>(i) * k;
    int j = 0;
    for (; j + 4 <= n; j += 4) dot_tile<4, 4>(sums + j, n, rows, b + static_cast<size_t>(j) * k, k);
    for (; j < n; j++) dot_tile<4, 1>(sums + j, n, rows, b + static_cast<size_t>(j) * k, k);
    for (int r = 0; r < 4; r++) scale_store_avx512(c + static_cast<size_t>(i + r) * n, sums + static_cast<size_t>(r) * n, alpha, n, accumulate);
  }
  for (; i < end; i++) {
    dots_alone(sums, a + static_cast<size_t>(i) * k, b, n, k);
    scale_store_avx512(c + static_cast<size_t>(i) * n, sums, alpha, n, accumulate);
  }
}

FLYWHEEL_AVX512 void row_axpys_avx512(float* c, const float* a, const float* b, int n, int k, int begin, int end, float alpha, bool accumulate) {
  int i = begin;
  for (; i + 4 <= end; i += 4) axpy_rows<4>(c + static_cast<size_t>(i) * n, a + static_cast<size_t>(i) * k, b, n, k, alpha, accumulate);
  for (; i < end; i++) axpy_rows<1>(c + static_cast<size_t>(i) * n, a + static_cast<size_t>(i) * k, b, n, k, alpha, accumulate);
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
