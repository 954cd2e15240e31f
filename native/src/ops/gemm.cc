// The small f32 products of LoRA factors, forward and backward.
#include <algorithm>
#include <vector>

#include "../context.h"

namespace flywheel {

void KernelContext::gemm(float* c, const float* a, const float* b, const GemmSpec& s) {
  const int m = s.m, n = s.n, k = s.k;
  if (m <= 0 || n <= 0) return;
  auto axpys = ops_.axpys;
  auto dots = ops_.dots;
#if defined(__x86_64__)
  // The same bits as the AVX2 primitives, on wider registers.
  if (level_ == SimdLevel::Avx512) axpys = axpys_avx512, dots = dots_avx512;
#endif
  // LoRA's products have one dimension of the rank (8–64) beside the model's: each output is
  // summed either as a dot product over k (long k) or as k axpy steps over a row of n (long n),
  // with b turned into the layout that form reads. The form depends on the shapes only, never on
  // m or the thread count, so a row's result does not depend on the batch around it.
  const auto store = [&](int i, const float* sums) {
    float* out = c + static_cast<size_t>(i) * n;
#if defined(__x86_64__)
    if (level_ == SimdLevel::Avx512) {
      scale_store_avx512(out, sums, s.alpha, n, s.accumulate);
      return;
    }
#endif
    if (s.accumulate) {
      for (int j = 0; j < n; j++) out[j] += s.alpha * sums[j];
    } else {
      for (int j = 0; j < n; j++) out[j] = s.alpha * sums[j];
    }
  };
  // Transposed a with few columns of c (dB of LoRA: m = outputs, n = rank, k = rows): cᵀ row j is
  // Σ_p b[p, j] · a[p, :], k axpy steps over the long m.
  if (s.transpose_a && n <= 64 && n < m) {
    std::vector<float>& c_t = gemm_c_t_;
    c_t.assign(static_cast<size_t>(n) * m, 0.0f);
    scratch_.reserve(static_cast<size_t>(k));
    const auto column = [&](int j, int thread) {
      float* coefficients = scratch_.get(thread);
      for (int p = 0; p < k; p++) coefficients[p] = s.transpose_b ? b[static_cast<size_t>(j) * k + p] : b[static_cast<size_t>(p) * n + j];
      axpys(c_t.data() + static_cast<size_t>(j) * m, coefficients, a, k, m);
    };
    if (static_cast<double>(m) * n * k < kSerialWork || pool_.size() == 1) {
      for (int j = 0; j < n; j++) column(j, 0);
    } else {
      pool_.parallel_for(n, column);
    }
    std::vector<float> sums(n);
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) sums[j] = c_t[static_cast<size_t>(j) * m + i];
      store(i, sums.data());
    }
    return;
  }
  // b as the form reads it: [n × k] rows for dot products, [k × n] rows for axpy steps. Only a
  // b with fewer than 16 rows or columns is ever copied into the other layout.
  const bool dot_form = s.transpose_b ? k >= n : k >= n && n < 16;
  const float* rows_of_b = b;
  if (dot_form != s.transpose_b) {
    gemm_b_.resize(static_cast<size_t>(n) * k);
    const int b_rows = s.transpose_b ? n : k;
    const int b_cols = s.transpose_b ? k : n;
    for (int r = 0; r < b_rows; r++) {
      for (int col = 0; col < b_cols; col++) gemm_b_[static_cast<size_t>(col) * b_rows + r] = b[static_cast<size_t>(r) * b_cols + col];
    }
    rows_of_b = gemm_b_.data();
  }
  // Thread t's scratch: n sums, then a column of a when a is transposed.
  scratch_.reserve(static_cast<size_t>(n) + k);
  auto row = [&](int i, int thread) {
    float* sums = scratch_.get(thread);
    const float* a_row = a + static_cast<size_t>(i) * k;
    if (s.transpose_a) {
      float* column = sums + n;
      for (int p = 0; p < k; p++) column[p] = a[static_cast<size_t>(p) * m + i];
      a_row = column;
    }
    if (dot_form) {
      dots(sums, a_row, rows_of_b, n, k);
    } else {
      axpys(sums, a_row, rows_of_b, k, n);
    }
    store(i, sums);
  };
  const double work = static_cast<double>(m) * n * k;
  if (work < kSerialWork || pool_.size() == 1) {
    for (int i = 0; i < m; i++) row(i, 0);
    return;
  }
  const int tasks = std::min(m, pool_.size() * 8);
  pool_.parallel_for(tasks, [&](int task, int thread) {
    for (int i = task; i < m; i += tasks) row(i, thread);
  });
}

}  // namespace flywheel
