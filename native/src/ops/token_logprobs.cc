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

}  // namespace

void KernelContext::token_logprob_sums(const float* logits, int rows, int vocab, const double* fraction_powers, double* maxes,
                                       double* sums, double* weighted) {
  const auto row_sums = [&](size_t r) {
    const float* row = logits + r * static_cast<size_t>(vocab);
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
    maxes[r] = max;
    sums[r] = sum;
    weighted[r] = weighted_sum;
  };
  for_chunks(rows, 1, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; r++) row_sums(r);
  });
}

void KernelContext::token_logprobs_backward(float* logits, int rows, int vocab, const int32_t* targets, const double* normalizers,
                                            const double* gradients, const double* fraction_powers) {
  for_chunks(rows, 1, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; r++) {
      float* row = logits + r * static_cast<size_t>(vocab);
      const double g = gradients[r];
      const double normalizer = normalizers[r];
      for (int j = 0; j < vocab; j++) row[j] = static_cast<float>(-g * exp_non_positive(static_cast<double>(row[j]) - normalizer, fraction_powers));
      row[targets[r]] = static_cast<float>(static_cast<double>(row[targets[r]]) + g);
    }
  });
}

}  // namespace flywheel
