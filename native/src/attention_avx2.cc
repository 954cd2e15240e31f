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

template <int C>
FLYWHEEL_AVX2 void head_kernel(const AttentionHead& head) {
  __m256 q[C];
  const __m256 scale = _mm256_set1_ps(head.scale);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) q[c] = _mm256_mul_ps(_mm256_loadu_ps(head.query + 8 * c), scale);
  const size_t stride = head.stride;
  const int visible = head.visible;
  float* scores = head.scores;

  int j = 0;
  for (; j + 4 <= visible; j += 4) {
    const float* k = head.keys + j * stride;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) {
      s0 = _mm256_fmadd_ps(q[c], _mm256_loadu_ps(k + 8 * c), s0);
      s1 = _mm256_fmadd_ps(q[c], _mm256_loadu_ps(k + stride + 8 * c), s1);
      s2 = _mm256_fmadd_ps(q[c], _mm256_loadu_ps(k + 2 * stride + 8 * c), s2);
      s3 = _mm256_fmadd_ps(q[c], _mm256_loadu_ps(k + 3 * stride + 8 * c), s3);
    }
    _mm_storeu_ps(scores + j, reduce4(s0, s1, s2, s3));
  }
  for (; j < visible; j++) {
    const float* k = head.keys + j * stride;
    __m256 s = _mm256_setzero_ps();
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) s = _mm256_fmadd_ps(q[c], _mm256_loadu_ps(k + 8 * c), s);
    const __m128 r = reduce4(s, _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps());
    scores[j] = _mm_cvtss_f32(r);
  }

  const VectorOps& ops = vector_ops_avx2();
  const float max = ops.max(scores, visible);
  const float inverse_sum = 1.0f / ops.exp_shifted(scores, visible, max);

  __m256 acc[C];
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) acc[c] = _mm256_setzero_ps();
  for (j = 0; j < visible; j++) {
    const float* v = head.values + j * stride;
    const __m256 weight = _mm256_broadcast_ss(scores + j);
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) acc[c] = _mm256_fmadd_ps(weight, _mm256_loadu_ps(v + 8 * c), acc[c]);
  }
  const __m256 normalize = _mm256_set1_ps(inverse_sum);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) _mm256_storeu_ps(head.out + 8 * c, _mm256_mul_ps(acc[c], normalize));
}

}  // namespace

AttentionHeadKernel attention_head_avx2(int head_dim) {
  if (head_dim == 64) return head_kernel<8>;
  if (head_dim == 128) return head_kernel<16>;
  return nullptr;
}

}  // namespace flywheel

#endif
