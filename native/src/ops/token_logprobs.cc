// KernelContext::token_logprob_sums and its backward: log-softmax over a vocabulary, per row.
//
// These repeat, operation for operation, the sampler's log-sum-exp in JavaScript
// (src/engine/sampling/fast-math.ts): the same exp (a 64-entry table of 2^(-j/64), handed in from
// JavaScript so both read the very same doubles, and a degree-5 polynomial), summed in doubles in
// index order. IEEE arithmetic without fused multiply-adds (the build turns contraction off) then
// gives the same bits, so the trainer's logprobs equal the sampler's. Rows are independent and
// shared out over the pool; each row is summed by one thread.
#include <cmath>

#include "../context.h"
#include "../softmax_avx512.h"

namespace flywheel {

namespace {

constexpr double kStepsPerLn2 = 64 / 0.6931471805599453;
constexpr double kLn2Over64Hi = 0.6931471803691238 / 64;
constexpr double kLn2Over64Lo = 1.9082149292705877e-10 / 64;
constexpr double kRoundingShift = 6755399441055744.0;  // 1.5 · 2^52
constexpr double kExpFloor = -700;

// 2^-e for 0 ≤ e < 1024, exact (halving a power of two is exact down to 2^-1022): the integer part
// of exp's scaling, as the JavaScript version reads it from a table too.
struct IntegerPowers {
  double values[1024];
  IntegerPowers() {
    values[0] = 1;
    for (int e = 1; e < 1024; e++) values[e] = values[e - 1] / 2;
  }
};
const IntegerPowers kIntegerPowers;

// e^x for x ≤ 0; `fraction_powers[j]` = 2^(-j/64).
inline double exp_non_positive(double x, const double* fraction_powers) {
  if (!(x > kExpFloor)) return 0;
  if (x > 0) return std::exp(x);
  const double steps = (x * kStepsPerLn2 + kRoundingShift) - kRoundingShift;
  const double r = (x - steps * kLn2Over64Hi) - steps * kLn2Over64Lo;
  const double poly = 1 + r * (1 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r / 120))));
  const int k = static_cast<int>(-steps);
  return poly * fraction_powers[k & 63] * kIntegerPowers.values[k >> 6];
}

// One row's sums, the max in index order as above.
void row_sums_scalar(const float* row, int vocab, const double* fraction_powers, double& max_out, double& sum_out, double& weighted_out) {
  double max = -INFINITY;
  for (int j = 0; j < vocab; j++) {
    if (row[j] > max) max = row[j];
  }
  double sum = 0;
  double weighted_sum = 0;
  for (int j = 0; j < vocab; j++) {
    const double e = exp_non_positive(static_cast<double>(row[j]) - max, fraction_powers);
    sum += e;
    weighted_sum += e * static_cast<double>(row[j]);
  }
  max_out = max;
  sum_out = sum;
  weighted_out = weighted_sum;
}

#if FLYWHEEL_HAVE_X86
// The same sums for R consecutive rows, with exp_non_positive and the products e·x computed for 8
// entries at once: each lane does exp_non_positive's double operations in its order (separate
// multiplies and adds, the same table reads), so every e is the scalar one, and each row's sums
// still add its values one at a time in index order. Rows go R at a time only so that their R
// serial chains of additions overlap. Lanes past the floor (or NaN) give 0 without reading the
// tables; a block with x > 0 (not reached after subtracting the max) goes through the scalar function.
template <int R>
FLYWHEEL_AVX512 void rows_sums_avx512(const float* logits, int vocab, const double* fraction_powers, double* maxes, double* sums,
                                      double* weighted) {
  const float* row[R];
  double max[R], sum[R], weighted_sum[R];
  for (int r = 0; r < R; r++) {
    row[r] = logits + static_cast<size_t>(r) * vocab;
    max[r] = -INFINITY;
    sum[r] = 0;
    weighted_sum[r] = 0;
  }
  for (int j = 0; j < vocab; j++) {
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      if (row[r][j] > max[r]) max[r] = row[r][j];
    }
  }
  const __m512d floor_v = _mm512_set1_pd(kExpFloor);
  const __m512d zero = _mm512_setzero_pd();
  const __m512d steps_per_ln2 = _mm512_set1_pd(kStepsPerLn2);
  const __m512d shift = _mm512_set1_pd(kRoundingShift);
  const __m512d hi = _mm512_set1_pd(kLn2Over64Hi);
  const __m512d lo = _mm512_set1_pd(kLn2Over64Lo);
  const __m512d one = _mm512_set1_pd(1);
  const __m256i low_bits = _mm256_set1_epi32(63);
  alignas(64) double e[R][8];
  alignas(64) double products[R][8];
  int j = 0;
  for (; j + 8 <= vocab; j += 8) {
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const __m512d value = _mm512_cvtps_pd(_mm256_loadu_ps(row[r] + j));
      const __m512d x = _mm512_sub_pd(value, _mm512_set1_pd(max[r]));
      const __mmask8 live = _mm512_cmp_pd_mask(x, floor_v, _CMP_GT_OQ);
      if (_mm512_cmp_pd_mask(x, zero, _CMP_GT_OQ) != 0) {
        for (int i = 0; i < 8; i++) {
          e[r][i] = exp_non_positive(static_cast<double>(row[r][j + i]) - max[r], fraction_powers);
          products[r][i] = e[r][i] * static_cast<double>(row[r][j + i]);
        }
        continue;
      }
      const __m512d steps = _mm512_sub_pd(_mm512_add_pd(_mm512_mul_pd(x, steps_per_ln2), shift), shift);
      const __m512d rest = _mm512_sub_pd(_mm512_sub_pd(x, _mm512_mul_pd(steps, hi)), _mm512_mul_pd(steps, lo));
      __m512d poly = _mm512_add_pd(_mm512_set1_pd(1.0 / 24), _mm512_div_pd(rest, _mm512_set1_pd(120)));
      poly = _mm512_add_pd(_mm512_set1_pd(1.0 / 6), _mm512_mul_pd(rest, poly));
      poly = _mm512_add_pd(_mm512_set1_pd(0.5), _mm512_mul_pd(rest, poly));
      poly = _mm512_add_pd(one, _mm512_mul_pd(rest, poly));
      poly = _mm512_add_pd(one, _mm512_mul_pd(rest, poly));
      // k = (int)(-steps); masked off where x is past the floor, where it may not fit the tables.
      const __m256i k = _mm512_maskz_cvttpd_epi32(live, _mm512_sub_pd(zero, steps));
      const __m512d fraction = _mm512_mask_i32gather_pd(zero, live, _mm256_and_si256(k, low_bits), fraction_powers, 8);
      const __m512d integer = _mm512_mask_i32gather_pd(zero, live, _mm256_srai_epi32(k, 6), kIntegerPowers.values, 8);
      const __m512d exp = _mm512_maskz_mov_pd(live, _mm512_mul_pd(_mm512_mul_pd(poly, fraction), integer));
      _mm512_store_pd(e[r], exp);
      _mm512_store_pd(products[r], _mm512_mul_pd(exp, value));
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
#pragma GCC unroll 4
      for (int r = 0; r < R; r++) {
        sum[r] += e[r][i];
        weighted_sum[r] += products[r][i];
      }
    }
  }
  for (int r = 0; r < R; r++) {
    for (int t = j; t < vocab; t++) {
      const double scalar = exp_non_positive(static_cast<double>(row[r][t]) - max[r], fraction_powers);
      sum[r] += scalar;
      weighted_sum[r] += scalar * static_cast<double>(row[r][t]);
    }
    maxes[r] = max[r];
    sums[r] = sum[r];
    weighted[r] = weighted_sum[r];
  }
}

// The backward's row[j] = −g · e^(row[j] − normalizer) for the row's whole 16-float steps, in f32
// after the subtraction in doubles: the gradient has no bits to match (only the forward's sums
// must equal the sampler's), and f32's exp is as close as the f32 result can hold. Returns the
// index where the scalar tail starts.
FLYWHEEL_AVX512 int softmax_gradient_avx512(float* row, int vocab, double normalizer, double g) {
  const __m512d shift = _mm512_set1_pd(normalizer);
  const __m512 scale = _mm512_set1_ps(static_cast<float>(-g));
  int j = 0;
  for (; j + 16 <= vocab; j += 16) {
    const __m256 low = _mm512_cvtpd_ps(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(row + j)), shift));
    const __m256 high = _mm512_cvtpd_ps(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(row + j + 8)), shift));
    const __m512 x = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(low)), _mm256_castps_pd(high), 1));
    _mm512_storeu_ps(row + j, _mm512_mul_ps(scale, exp16(x)));
  }
  return j;
}
#endif

}  // namespace

void KernelContext::token_logprob_sums(const float* logits, int rows, int vocab, const double* fraction_powers, double* maxes,
                                       double* sums, double* weighted) {
  const auto row_sums_at = [&](size_t r) {
    row_sums_scalar(logits + r * static_cast<size_t>(vocab), vocab, fraction_powers, maxes[r], sums[r], weighted[r]);
  };
  for_chunks(rows, 1, [&](size_t begin, size_t end) {
    size_t r = begin;
#if FLYWHEEL_HAVE_X86
    if (level_ == SimdLevel::Avx512) {
      const auto at = [&](size_t row) { return logits + row * static_cast<size_t>(vocab); };
      for (; r + 4 <= end; r += 4) rows_sums_avx512<4>(at(r), vocab, fraction_powers, maxes + r, sums + r, weighted + r);
      for (; r < end; r++) rows_sums_avx512<1>(at(r), vocab, fraction_powers, maxes + r, sums + r, weighted + r);
    }
#endif
    for (; r < end; r++) row_sums_at(r);
  });
}

void KernelContext::token_logprobs_backward(float* logits, int rows, int vocab, const int32_t* targets, const double* normalizers,
                                            const double* gradients, const double* fraction_powers) {
  for_chunks(rows, 1, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; r++) {
      float* row = logits + r * static_cast<size_t>(vocab);
      const double g = gradients[r];
      const double normalizer = normalizers[r];
      int j = 0;
#if FLYWHEEL_HAVE_X86
      if (level_ == SimdLevel::Avx512) j = softmax_gradient_avx512(row, vocab, normalizer, g);
#endif
      for (; j < vocab; j++) row[j] = static_cast<float>(-g * exp_non_positive(static_cast<double>(row[j]) - normalizer, fraction_powers));
      row[targets[r]] = static_cast<float>(static_cast<double>(row[targets[r]]) + g);
    }
  });
}

}  // namespace flywheel
