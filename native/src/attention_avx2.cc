// AVX2 attention for one query head with head_dim = 8·C: the query and the output accumulator
// live in C registers each, so every cached key and value is loaded once and feeds C fused
// multiply-adds, with no calls per position (the portable path makes two per position).
#include "attention.h"
#include "simd.h"

#if FLYWHEEL_HAVE_X86

namespace flywheel {

namespace {

// Four scores at once: four dot products, then one transposing reduction.
FLYWHEEL_AVX2 inline __m128 reduce4(__m256 a, __m256 b, __m256 c, __m256 d) {
  const __m256 ab = _mm256_hadd_ps(a, b);
  const __m256 cd = _mm256_hadd_ps(c, d);
  const __m256 abcd = _mm256_hadd_ps(ab, cd);
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

// Four dot products of a register-held vector with rows j..j+3 (row stride `stride`).
template <int C>
FLYWHEEL_AVX2 inline __m128 dot4(const __m256* x, const float* rows, size_t stride) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) {
    s0 = _mm256_fmadd_ps(x[c], _mm256_loadu_ps(rows + 8 * c), s0);
    s1 = _mm256_fmadd_ps(x[c], _mm256_loadu_ps(rows + stride + 8 * c), s1);
    s2 = _mm256_fmadd_ps(x[c], _mm256_loadu_ps(rows + 2 * stride + 8 * c), s2);
    s3 = _mm256_fmadd_ps(x[c], _mm256_loadu_ps(rows + 3 * stride + 8 * c), s3);
  }
  return reduce4(s0, s1, s2, s3);
}

template <int C>
FLYWHEEL_AVX2 inline float dot1(const __m256* x, const float* row) {
  __m256 s = _mm256_setzero_ps();
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) s = _mm256_fmadd_ps(x[c], _mm256_loadu_ps(row + 8 * c), s);
  return _mm_cvtss_f32(reduce4(s, _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()));
}

// Every position's dot product with a register-held vector into out[0..visible).
template <int C>
FLYWHEEL_AVX2 inline void dots(const __m256* x, const float* rows, size_t stride, int visible, float* out) {
  int j = 0;
  for (; j + 4 <= visible; j += 4) _mm_storeu_ps(out + j, dot4<C>(x, rows + j * stride, stride));
  for (; j < visible; j++) out[j] = dot1<C>(x, rows + j * stride);
}

template <int C>
FLYWHEEL_AVX2 void head_kernel(const AttentionHead& head) {
  __m256 q[C];
  const __m256 scale = _mm256_set1_ps(head.scale);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) q[c] = _mm256_mul_ps(_mm256_loadu_ps(head.query + 8 * c), scale);
  const size_t stride = head.stride;
  const int visible = head.visible;
  float* scores = head.scores;
  dots<C>(q, head.keys, stride, visible, scores);
  int j;

  const VectorOps& ops = vector_ops_avx2();
  const float max = ops.max(scores, visible);
  const float inverse_sum = 1.0f / ops.exp_shifted(scores, visible, max);

  // Small heads sum even and odd positions apart (twice the independent FMA chains), then add
  // the two: a fixed order for a given `visible`, so decode and prefill still agree bit for bit.
  constexpr int S = C < 8 ? 2 : 1;
  __m256 acc[S][C];
#pragma GCC unroll 16
  for (int s = 0; s < S; s++) {
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) acc[s][c] = _mm256_setzero_ps();
  }
  j = 0;
  for (; j + S <= visible; j += S) {
#pragma GCC unroll 16
    for (int s = 0; s < S; s++) {
      const float* v = head.values + (j + s) * stride;
      const __m256 weight = _mm256_broadcast_ss(scores + j + s);
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) acc[s][c] = _mm256_fmadd_ps(weight, _mm256_loadu_ps(v + 8 * c), acc[s][c]);
    }
  }
  for (; j < visible; j++) {
    const float* v = head.values + j * stride;
    const __m256 weight = _mm256_broadcast_ss(scores + j);
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) acc[0][c] = _mm256_fmadd_ps(weight, _mm256_loadu_ps(v + 8 * c), acc[0][c]);
  }
  if constexpr (S == 2) {
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) acc[0][c] = _mm256_add_ps(acc[0][c], acc[1][c]);
  }
  const __m256 normalize = _mm256_set1_ps(inverse_sum);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) _mm256_storeu_ps(head.out + 8 * c, _mm256_mul_ps(acc[0][c], normalize));
}

template <int C>
FLYWHEEL_AVX2 void backward_kernel(const AttentionBackwardHead& head) {
  const int n = head.visible;
  const size_t stride = head.stride;
  float* p = head.scratch;
  float* dp = head.scratch + n;
  __m256 x[C];
  // Scores as the forward computes them (query scaled first), then the probabilities.
  const __m256 scale = _mm256_set1_ps(head.scale);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) x[c] = _mm256_mul_ps(_mm256_loadu_ps(head.query + 8 * c), scale);
  dots<C>(x, head.keys, stride, n, p);
  const VectorOps& ops = vector_ops_avx2();
  const float max = ops.max(p, n);
  const float inverse_sum = 1.0f / ops.exp_shifted(p, n, max);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) x[c] = _mm256_loadu_ps(head.d_out + 8 * c);
  dots<C>(x, head.values, stride, n, dp);
  __m256 weighted = _mm256_setzero_ps();
  const __m256 normalize = _mm256_set1_ps(inverse_sum);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 pj = _mm256_mul_ps(_mm256_loadu_ps(p + j), normalize);
    _mm256_storeu_ps(p + j, pj);
    weighted = _mm256_fmadd_ps(pj, _mm256_loadu_ps(dp + j), weighted);
  }
  float mean = _mm_cvtss_f32(reduce4(weighted, _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()));
  for (; j < n; j++) {
    p[j] *= inverse_sum;
    mean += p[j] * dp[j];
  }
  // dq sums over positions in S interleaved chains; q and dO stay in registers for small heads.
  constexpr int S = C < 8 ? 2 : 1;
  constexpr int hd = 8 * C;
  __m256 dq[S][C];
  __m256 qv[C], gv[C];
#pragma GCC unroll 16
  for (int s = 0; s < S; s++) {
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) dq[s][c] = _mm256_setzero_ps();
  }
  if constexpr (C < 8) {
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) qv[c] = _mm256_loadu_ps(head.query + 8 * c), gv[c] = _mm256_loadu_ps(head.d_out + 8 * c);
  }
  // One position's updates, into dq chain `s` (static, so the chains stay in registers).
  const auto update = [&](int j, __m256* dq_chain) FLYWHEEL_AVX2 {
    const float ds = p[j] * (dp[j] - mean) * head.scale;
    const __m256 dsv = _mm256_set1_ps(ds);
    const __m256 pv = _mm256_set1_ps(p[j]);
    const float* k = head.keys + j * stride;
    float* dk = head.d_keys + static_cast<size_t>(j) * hd;
    float* dv = head.d_values + static_cast<size_t>(j) * hd;
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) {
      const __m256 q = C < 8 ? qv[c] : _mm256_loadu_ps(head.query + 8 * c);
      const __m256 g = C < 8 ? gv[c] : _mm256_loadu_ps(head.d_out + 8 * c);
      dq_chain[c] = _mm256_fmadd_ps(dsv, _mm256_loadu_ps(k + 8 * c), dq_chain[c]);
      _mm256_storeu_ps(dk + 8 * c, _mm256_fmadd_ps(dsv, q, _mm256_loadu_ps(dk + 8 * c)));
      _mm256_storeu_ps(dv + 8 * c, _mm256_fmadd_ps(pv, g, _mm256_loadu_ps(dv + 8 * c)));
    }
  };
  j = 0;
  for (; j + S <= n; j += S) {
    update(j, dq[0]);
    if constexpr (S == 2) update(j + 1, dq[S - 1]);
  }
  for (; j < n; j++) update(j, dq[0]);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) _mm256_storeu_ps(head.d_query + 8 * c, S == 2 ? _mm256_add_ps(dq[0][c], dq[S - 1][c]) : dq[0][c]);
}

}  // namespace

AttentionHeadKernel attention_head_avx2(int head_dim) {
  if (head_dim == 32) return head_kernel<4>;
  if (head_dim == 64) return head_kernel<8>;
  if (head_dim == 128) return head_kernel<16>;
  return nullptr;
}

AttentionBackwardKernel attention_backward_avx2(int head_dim) {
  if (head_dim == 32) return backward_kernel<4>;
  if (head_dim == 64) return backward_kernel<8>;
  if (head_dim == 128) return backward_kernel<16>;
  return nullptr;
}

}  // namespace flywheel

#endif
