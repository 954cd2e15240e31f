// The small f32 products of LoRA factors, forward and backward.
#include <algorithm>
#include <vector>

#include "../context.h"

namespace flywheel {

void KernelContext::gemm(float* c, const float* a, const float* b, const GemmSpec& s) {
  const int m = s.m, n = s.n, k = s.k;
  if (m <= 0 || n <= 0) return;
  const auto axpys = ops_.axpys;
  const auto dots = ops_.dots;
  // LoRA's products have one dimension of the rank (8–64) beside the model's: each output is
  // summed either as a dot product over k (long k) or as k axpy steps over a row of n (long n),
  // with b turned into the layout that form reads. The form depends on the shapes only, never on
  // m or the thread count, so a row's result does not depend on the batch around it.
  // Transposed a with one side of the rank (LoRA's dB: n small; dA: m small), summed over k rows:
  // each of the small side's sums is k axpy steps over a row of the long side.
  const bool small_n = s.transpose_a && n <= 64 && n < m;
  const bool small_m = s.transpose_a && !s.transpose_b && m <= 64 && m < n && n >= 16;
#if defined(__x86_64__)
  if (level_ == SimdLevel::Avx512 && (small_n || small_m)) {
    transposed_a_products(c, a, b, s, small_n);
    return;
  }
#endif
  if (small_n) {
    // cᵀ row j is Σ_p b[p, j] · a[p, :], one row at a time.
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
    store_transposed(c, c_t.data(), s);
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
  const double work = static_cast<double>(m) * n * k;
#if defined(__x86_64__)
  // At AVX-512, rows four at a time, sharing each load of b; a row's bits are those it gets alone,
  // the AVX2 primitives' bits. Thread t's scratch: row_dots_avx512's 4·n sums, then four rows of a
  // transposed a gathered from its columns.
  if (level_ == SimdLevel::Avx512) {
    scratch_.reserve(4 * (static_cast<size_t>(n) + k));
    const auto rows = [&](int begin, int end, int thread) {
      float* sums = scratch_.get(thread);
      const auto product = [&](float* c_rows, const float* a_rows, int count) {
        if (dot_form) {
          row_dots_avx512(c_rows, a_rows, rows_of_b, n, k, 0, count, s.alpha, s.accumulate, sums);
        } else {
          row_axpys_avx512(c_rows, a_rows, rows_of_b, n, k, 0, count, s.alpha, s.accumulate);
        }
      };
      if (!s.transpose_a) {
        product(c + static_cast<size_t>(begin) * n, a + static_cast<size_t>(begin) * k, end - begin);
        return;
      }
      float* gathered = sums + 4 * static_cast<size_t>(n);
      for (int first = begin; first < end; first += 4) {
        const int count = std::min(4, end - first);
        for (int r = 0; r < count; r++) {
          for (int p = 0; p < k; p++) gathered[r * k + p] = a[static_cast<size_t>(p) * m + first + r];
        }
        product(c + static_cast<size_t>(first) * n, gathered, count);
      }
    };
    if (work < kSerialWork || pool_.size() == 1) {
      rows(0, m, 0);
    } else {
      const int tiles = (m + 3) / 4;
      const int tasks = std::min(tiles, pool_.size() * 8);
      pool_.parallel_for(tasks, [&](int task, int thread) {
        rows(4 * (task * tiles / tasks), std::min(m, 4 * ((task + 1) * tiles / tasks)), thread);
      });
    }
    return;
  }
#endif
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
    store_row(c, i, sums, s);
  };
  if (work < kSerialWork || pool_.size() == 1) {
    for (int i = 0; i < m; i++) row(i, 0);
    return;
  }
  const int tasks = std::min(m, pool_.size() * 8);
  pool_.parallel_for(tasks, [&](int task, int thread) {
    for (int i = task; i < m; i += tasks) row(i, thread);
  });
}

void KernelContext::store_row(float* c, int i, const float* sums, const GemmSpec& s) {
  float* out = c + static_cast<size_t>(i) * s.n;
#if defined(__x86_64__)
  if (level_ == SimdLevel::Avx512) {
    scale_store_avx512(out, sums, s.alpha, s.n, s.accumulate);
    return;
  }
#endif
  if (s.accumulate) {
    for (int j = 0; j < s.n; j++) out[j] += s.alpha * sums[j];
  } else {
    for (int j = 0; j < s.n; j++) out[j] = s.alpha * sums[j];
  }
}

void KernelContext::store_transposed(float* c, const float* c_t, const GemmSpec& s) {
  std::vector<float> sums(s.n);
  for (int i = 0; i < s.m; i++) {
    for (int j = 0; j < s.n; j++) sums[j] = c_t[static_cast<size_t>(j) * s.m + i];
    store_row(c, i, sums.data(), s);
  }
}

#if defined(__x86_64__)
void KernelContext::transposed_a_products(float* c, const float* a, const float* b, const GemmSpec& s, bool small_n) {
  const int m = s.m, n = s.n, k = s.k;
  // small_n: cᵀ [n × m] = Σ_p b[p, :]ᵀ a[p, :], coefficients from b and rows of a;
  // small_m: c [m × n] = Σ_p a[p, :]ᵀ b[p, :], coefficients from a and rows of b.
  const int count = small_n ? n : m;
  const int length = small_n ? m : n;
  const float* coefficients = small_n ? b : a;
  const float* rows = small_n ? a : b;
  if (small_n && s.transpose_b) {
    gemm_b_.resize(static_cast<size_t>(k) * n);
    for (int p = 0; p < k; p++) {
      for (int j = 0; j < n; j++) gemm_b_[static_cast<size_t>(p) * n + j] = b[static_cast<size_t>(j) * k + p];
    }
    coefficients = gemm_b_.data();
  }
  std::vector<float>& sums = gemm_c_t_;
  sums.resize(static_cast<size_t>(count) * length);
  // Tasks own whole 32-column blocks, so an element's chain never depends on the thread count.
  const int blocks = (length + 31) / 32;
  const auto run = [&](int first, int last) {
    outer_sums_avx512(sums.data(), coefficients, count, rows, k, length, first * 32, std::min(length, last * 32));
  };
  if (static_cast<double>(m) * n * k < kSerialWork || pool_.size() == 1) {
    run(0, blocks);
  } else {
    const int tasks = std::min(blocks, pool_.size() * 4);
    pool_.parallel_for(tasks, [&](int task, int) { run(task * blocks / tasks, (task + 1) * blocks / tasks); });
  }
  if (small_n) {
    store_transposed(c, sums.data(), s);
  } else {
    for (int i = 0; i < m; i++) store_row(c, i, sums.data() + static_cast<size_t>(i) * n, s);
  }
}
#endif

}  // namespace flywheel
