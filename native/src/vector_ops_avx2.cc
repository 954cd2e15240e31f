#include "simd.h"
#include "vector_ops.h"

#if FLYWHEEL_HAVE_X86

#include <cmath>

namespace flywheel {

namespace {

FLYWHEEL_AVX2 inline float horizontal_sum(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

// exp(x) for 8 lanes: x = n·ln2 + r with |r| ≤ ln2/2, a degree-6 polynomial for exp(r) (Cephes'
// expf coefficients), and 2^n put into the exponent bits. Inputs are clamped to the range whose
// result is a normal float, which softmax and silu never leave in a way that matters.
FLYWHEEL_AVX2 inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0f));
  const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(exponent));
}

FLYWHEEL_AVX2 float dot(const float* a, const float* b, int n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float sum = horizontal_sum(_mm256_add_ps(s0, s1));
  for (; i < n; i++) sum += a[i] * b[i];
  return sum;
}

FLYWHEEL_AVX2 void axpy(float* y, float a, const float* x, int n) {
  const __m256 av = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; i++) y[i] += a * x[i];
}

// Four rows' dot products at once: each keeps dot's two chains (s0 over even 8-float blocks, s1
// over odd ones), its horizontal sum and its scalar tail, so every result has dot's bits.
FLYWHEEL_AVX2 void dots(float* out, const float* a, const float* rows, int count, int n) {
  int j = 0;
  for (; j + 4 <= count; j += 4) {
    const float* b[4] = {rows + static_cast<size_t>(j) * n, rows + static_cast<size_t>(j + 1) * n, rows + static_cast<size_t>(j + 2) * n,
                         rows + static_cast<size_t>(j + 3) * n};
    __m256 s0[4], s1[4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) s0[r] = _mm256_setzero_ps(), s1[r] = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m256 a0 = _mm256_loadu_ps(a + i);
      const __m256 a1 = _mm256_loadu_ps(a + i + 8);
#pragma GCC unroll 4
      for (int r = 0; r < 4; r++) {
        s0[r] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b[r] + i), s0[r]);
        s1[r] = _mm256_fmadd_ps(a1, _mm256_loadu_ps(b[r] + i + 8), s1[r]);
      }
    }
    if (i + 8 <= n) {
      const __m256 a0 = _mm256_loadu_ps(a + i);
#pragma GCC unroll 4
      for (int r = 0; r < 4; r++) s0[r] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b[r] + i), s0[r]);
      i += 8;
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
      float sum = horizontal_sum(_mm256_add_ps(s0[r], s1[r]));
      for (int t = i; t < n; t++) sum += a[t] * b[r][t];
      out[j + r] = sum;
    }
  }
  for (; j < count; j++) out[j] = dot(a, rows + static_cast<size_t>(j) * n, n);
}

// y over 32-float blocks held in four registers while every row adds in (axpy's fused
// multiply-add per element, rows in order); the tail as axpy's scalar loop does it.
FLYWHEEL_AVX2 void axpys(float* y, const float* coefficients, const float* rows, int count, int n) {
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int p = 0; p < count; p++) {
      if (coefficients[p] == 0.0f) continue;
      const __m256 av = _mm256_set1_ps(coefficients[p]);
      const float* x = rows + static_cast<size_t>(p) * n + i;
#pragma GCC unroll 4
      for (int v = 0; v < 4; v++) acc[v] = _mm256_fmadd_ps(av, _mm256_loadu_ps(x + 8 * v), acc[v]);
    }
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) _mm256_storeu_ps(y + i + 8 * v, acc[v]);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int p = 0; p < count; p++) {
      if (coefficients[p] != 0.0f) acc = _mm256_fmadd_ps(_mm256_set1_ps(coefficients[p]), _mm256_loadu_ps(rows + static_cast<size_t>(p) * n + i), acc);
    }
    _mm256_storeu_ps(y + i, acc);
  }
  for (; i < n; i++) {
    float sum = 0.0f;
    for (int p = 0; p < count; p++) {
      if (coefficients[p] != 0.0f) sum += coefficients[p] * rows[static_cast<size_t>(p) * n + i];
    }
    y[i] = sum;
  }
}

FLYWHEEL_AVX2 float exp_shifted(float* x, int n, float shift) {
  const __m256 sv = _mm256_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), sv));
    _mm256_storeu_ps(x + i, e);
    sum = _mm256_add_ps(sum, e);
  }
  float total = horizontal_sum(sum);
  if (i < n) {
    alignas(32) float tail[8] = {};
    for (int j = 0; i + j < n; j++) tail[j] = x[i + j] - shift;
    _mm256_store_ps(tail, exp8(_mm256_load_ps(tail)));
    for (int j = 0; i + j < n; j++) {
      x[i + j] = tail[j];
      total += tail[j];
    }
  }
  return total;
}

FLYWHEEL_AVX2 float max(const float* x, int n) {
  __m256 best = _mm256_set1_ps(-INFINITY);
  int i = 0;
  for (; i + 8 <= n; i += 8) best = _mm256_max_ps(best, _mm256_loadu_ps(x + i));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, best);
  float result = -INFINITY;
  for (float lane : lanes) result = lane > result ? lane : result;
  for (; i < n; i++) result = x[i] > result ? x[i] : result;
  return result;
}

FLYWHEEL_AVX2 double sum_squares(const float* x, int n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    s0 = _mm256_fmadd_ps(a, a, s0);
    s1 = _mm256_fmadd_ps(b, b, s1);
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 a = _mm256_loadu_ps(x + i);
    s0 = _mm256_fmadd_ps(a, a, s0);
  }
  double sum = horizontal_sum(_mm256_add_ps(s0, s1));
  for (; i < n; i++) sum += static_cast<double>(x[i]) * x[i];
  return sum;
}

FLYWHEEL_AVX2 void scale_mul(float* out, const float* x, float s, const float* w, int n) {
  const __m256 sv = _mm256_set1_ps(s);
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), sv), _mm256_loadu_ps(w + i)));
  for (; i < n; i++) out[i] = (x[i] * s) * w[i];
}

FLYWHEEL_AVX2 inline __m256 silu_mul8(__m256 g, __m256 u) {
  const __m256 e = exp8(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

// The tail runs through the same vector code (zero-padded), so an element's result does not depend
// on where a chunk boundary or the end of the buffer falls.
FLYWHEEL_AVX2 void silu_mul(float* out, const float* gate, const float* up, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, silu_mul8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  if (i < n) {
    alignas(32) float g[8] = {}, u[8] = {};
    for (size_t j = 0; i + j < n; j++) g[j] = gate[i + j], u[j] = up[i + j];
    _mm256_store_ps(g, silu_mul8(_mm256_load_ps(g), _mm256_load_ps(u)));
    for (size_t j = 0; i + j < n; j++) out[i + j] = g[j];
  }
}

FLYWHEEL_AVX2 void add(float* x, const float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; i++) x[i] += y[i];
}

FLYWHEEL_AVX2 void silu_mul_backward8(float* d_gate, float* d_up, const float* d_out, const float* gate, const float* up) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 g = _mm256_loadu_ps(gate);
  const __m256 d = _mm256_loadu_ps(d_out);
  const __m256 sigmoid = _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)))));
  _mm256_storeu_ps(d_up, _mm256_mul_ps(d, _mm256_mul_ps(g, sigmoid)));
  const __m256 slope = _mm256_fmadd_ps(g, _mm256_sub_ps(one, sigmoid), one);
  _mm256_storeu_ps(d_gate, _mm256_mul_ps(_mm256_mul_ps(d, _mm256_loadu_ps(up)), _mm256_mul_ps(sigmoid, slope)));
}

FLYWHEEL_AVX2 void silu_mul_backward(float* d_gate, float* d_up, const float* d_out, const float* gate, const float* up, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) silu_mul_backward8(d_gate + i, d_up + i, d_out + i, gate + i, up + i);
  if (i < n) {
    alignas(32) float dg[8] = {}, du[8] = {}, d[8] = {}, g[8] = {}, u[8] = {};
    for (size_t j = 0; i + j < n; j++) d[j] = d_out[i + j], g[j] = gate[i + j], u[j] = up[i + j];
    silu_mul_backward8(dg, du, d, g, u);
    for (size_t j = 0; i + j < n; j++) d_gate[i + j] = dg[j], d_up[i + j] = du[j];
  }
}

}  // namespace

const VectorOps& vector_ops_avx2() {
  static const VectorOps ops = {dot, axpy, dots, axpys, exp_shifted, max, sum_squares, scale_mul, silu_mul, add, silu_mul_backward};
  return ops;
}

}  // namespace flywheel

#endif
