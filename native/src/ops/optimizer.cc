// KernelContext's optimizer kernels: AdamW and the pieces of global gradient-norm clipping.
// AdamW repeats the TypeScript reference's double arithmetic element by element (contraction is
// off in this build), so both backends update weights to the same bits. The sum of squares is
// summed in fixed blocks whatever the thread count, so its result does not depend on the pool.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../context.h"
#include "../simd.h"

namespace flywheel {

namespace {

constexpr size_t kBlock = 1 << 14;

// One block of AdamW: double arithmetic per element, with IEEE operations only (sqrt and division
// are correctly rounded at any vector width, and contraction is off), so every SIMD level's copy
// below gives the same bits. Returns how many updated weights are not finite.
__attribute__((always_inline)) inline size_t adamw_range(float* __restrict params, const float* __restrict grads,
                                                         float* __restrict exp_avg, float* __restrict exp_avg_sq, size_t begin,
                                                         size_t end, const AdamWScalars& scalars) {
  const AdamWScalars s = scalars;
  size_t bad = 0;
  for (size_t j = begin; j < end; j++) {
    const double g = grads[j];
    const double m = s.beta1 * exp_avg[j] + (1 - s.beta1) * g;
    const double v = s.beta2 * exp_avg_sq[j] + (1 - s.beta2) * g * g;
    exp_avg[j] = static_cast<float>(m);
    exp_avg_sq[j] = static_cast<float>(v);
    const float updated = static_cast<float>(params[j] * s.decay - (s.step_size * m) / (std::sqrt(v) / s.bias_correction2_sqrt + s.eps));
    // Finite iff its exponent bits are not all ones (a test the vectorizer can widen).
    uint32_t bits;
    std::memcpy(&bits, &updated, sizeof bits);
    bad += (bits & 0x7f800000u) == 0x7f800000u;
    params[j] = updated;
  }
  return bad;
}

size_t adamw_range_baseline(float* params, const float* grads, float* exp_avg, float* exp_avg_sq, size_t begin, size_t end,
                            const AdamWScalars& s) {
  return adamw_range(params, grads, exp_avg, exp_avg_sq, begin, end, s);
}

#if FLYWHEEL_HAVE_X86
FLYWHEEL_AVX512 size_t adamw_range_avx512(float* params, const float* grads, float* exp_avg, float* exp_avg_sq, size_t begin,
                                          size_t end, const AdamWScalars& s) {
  return adamw_range(params, grads, exp_avg, exp_avg_sq, begin, end, s);
}
#endif

}  // namespace

size_t KernelContext::adamw_step(float* params, const float* grads, float* exp_avg, float* exp_avg_sq, size_t length,
                                 const AdamWScalars& s) {
  const size_t blocks = (length + kBlock - 1) / kBlock;
  std::vector<size_t> non_finite(blocks, 0);
  auto range = adamw_range_baseline;
#if FLYWHEEL_HAVE_X86
  if (level_ == SimdLevel::Avx512) range = adamw_range_avx512;
#endif
  for_chunks(blocks, 1, [&](size_t first, size_t last) {
    for (size_t block = first; block < last; block++) {
      non_finite[block] = range(params, grads, exp_avg, exp_avg_sq, block * kBlock, std::min(length, (block + 1) * kBlock), s);
    }
  });
  size_t total = 0;
  for (size_t bad : non_finite) total += bad;
  return total;
}

double KernelContext::sum_of_squares(const float* x, size_t length) {
  const size_t blocks = (length + kBlock - 1) / kBlock;
  std::vector<double> partial(blocks, 0);
  for_chunks(blocks, 1, [&](size_t first, size_t last) {
    for (size_t block = first; block < last; block++) {
      const size_t end = std::min(length, (block + 1) * kBlock);
      double lanes[8] = {};
      size_t j = block * kBlock;
      for (; j + 8 <= end; j += 8) {
        for (int l = 0; l < 8; l++) lanes[l] += static_cast<double>(x[j + l]) * x[j + l];
      }
      for (; j < end; j++) lanes[0] += static_cast<double>(x[j]) * x[j];
      partial[block] = sum_lanes(lanes);
    }
  });
  double total = 0;
  for (double sum : partial) total += sum;
  return total;
}

void KernelContext::scale(float* x, size_t length, double factor) {
  for_chunks(length, kBlock, [&](size_t begin, size_t end) {
    for (size_t j = begin; j < end; j++) x[j] = static_cast<float>(x[j] * factor);
  });
}

}  // namespace flywheel
