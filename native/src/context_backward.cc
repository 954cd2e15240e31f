// KernelContext's backward kernels (see context.h and backward.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "attention.h"
#include "context.h"

namespace flywheel {

namespace {

// Below this many multiply-adds a kernel runs on the calling thread alone.
constexpr double kSerialWork = 1 << 16;

}  // namespace

void KernelContext::gemm(float* c, const float* a, const float* b, const GemmSpec& s) {
  const int m = s.m, n = s.n, k = s.k;
  if (m <= 0 || n <= 0) return;
  // LoRA's products have one dimension of the rank (8–64) beside the model's: each output is
  // summed either as a dot product over k (long k) or as k axpy steps over a row of n (long n),
  // with b turned into the layout that form reads. The form depends on the shapes only, never on
  // m or the thread count, so a row's result does not depend on the batch around it.
  const auto store = [&](int i, const float* sums) {
    float* out = c + static_cast<size_t>(i) * n;
    if (s.accumulate) {
      for (int j = 0; j < n; j++) out[j] += s.alpha * sums[j];
    } else {
      for (int j = 0; j < n; j++) out[j] = s.alpha * sums[j];
    }
  };
  // Transposed a with few columns of c (dB of LoRA: m = outputs, n = rank, k = rows): cᵀ row j is
  // Σ_p b[p, j] · a[p, :], k axpy steps over the long m.
  if (s.transpose_a && n <= 64 && n < m) {
    std::vector<float> c_t(static_cast<size_t>(n) * m, 0.0f);
    const auto column = [&](int j) {
      float* sums = c_t.data() + static_cast<size_t>(j) * m;
      for (int p = 0; p < k; p++) {
        const float value = s.transpose_b ? b[static_cast<size_t>(j) * k + p] : b[static_cast<size_t>(p) * n + j];
        if (value != 0.0f) ops_.axpy(sums, value, a + static_cast<size_t>(p) * m, m);
      }
    };
    if (static_cast<double>(m) * n * k < kSerialWork || pool_.size() == 1) {
      for (int j = 0; j < n; j++) column(j);
    } else {
      pool_.parallel_for(n, [&](int j, int) { column(j); });
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
      for (int j = 0; j < n; j++) sums[j] = ops_.dot(a_row, rows_of_b + static_cast<size_t>(j) * k, k);
    } else {
      std::fill(sums, sums + n, 0.0f);
      for (int p = 0; p < k; p++) {
        if (a_row[p] != 0.0f) ops_.axpy(sums, a_row[p], rows_of_b + static_cast<size_t>(p) * n, n);
      }
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

void KernelContext::linear_weight_backward(float* d_weight, float* d_bias, const float* dy, const float* x, int rows, int out_dim,
                                           int in_dim) {
  // dW = dyᵀ·x is a matmul whose shared dimension is the rows: xᵀ packed as a weight matrix of
  // in_dim outputs over `rows` columns, against the rows of dyᵀ. The forward's tiles do the work.
  std::vector<float> x_t(static_cast<size_t>(in_dim) * rows);
  std::vector<float> dy_t(static_cast<size_t>(out_dim) * rows);
  for (int r = 0; r < rows; r++) {
    for (int i = 0; i < in_dim; i++) x_t[static_cast<size_t>(i) * rows + r] = x[static_cast<size_t>(r) * in_dim + i];
    for (int o = 0; o < out_dim; o++) dy_t[static_cast<size_t>(o) * rows + r] = dy[static_cast<size_t>(r) * out_dim + o];
  }
  const PackedMatrix packed(in_dim, rows, DType::F32, reinterpret_cast<const uint8_t*>(x_t.data()));
  x_t = std::vector<float>();
  std::vector<float> product(static_cast<size_t>(out_dim) * in_dim);
  flywheel::matmul(pool_, scratch_, matmul_kernels_, product.data(), dy_t.data(), out_dim, packed, nullptr);
  add(d_weight, product.data(), product.size());
  if (d_bias != nullptr) {
    for (int o = 0; o < out_dim; o++) {
      const float* g = dy_t.data() + static_cast<size_t>(o) * rows;
      double sum = 0;
      for (int r = 0; r < rows; r++) sum += g[r];
      d_bias[o] += static_cast<float>(sum);
    }
  }
}

void KernelContext::rms_norm_backward(float* dx, const float* dy, const float* x, const float* weight, int rows, int dim, float eps,
                                      bool accumulate, float* d_weight) {
  auto run_rows = [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; r++) {
      const float* xr = x + r * dim;
      const float* gr = dy + r * dim;
      float* out = dx + r * dim;
      double squares = 0;
      double dot = 0;
      for (int i = 0; i < dim; i++) {
        squares += static_cast<double>(xr[i]) * xr[i];
        dot += static_cast<double>(gr[i]) * weight[i] * xr[i];
      }
      const double inverse = 1.0 / std::sqrt(squares / dim + eps);
      const float scale = static_cast<float>(inverse);
      const float correction = static_cast<float>(inverse * inverse * inverse * dot / dim);
      if (d_weight != nullptr) {
        for (int i = 0; i < dim; i++) d_weight[i] += gr[i] * xr[i] * scale;
      }
      if (accumulate) {
        for (int i = 0; i < dim; i++) out[i] += scale * weight[i] * gr[i] - xr[i] * correction;
      } else {
        for (int i = 0; i < dim; i++) out[i] = scale * weight[i] * gr[i] - xr[i] * correction;
      }
    }
  };
  // The weight's gradient sums over rows: one thread, rows in order.
  if (d_weight != nullptr) {
    run_rows(0, rows);
  } else {
    for_chunks(rows, std::max<size_t>(1, (1 << 15) / dim), run_rows);
  }
}

void KernelContext::rope_backward(float* dx, int rows, int heads, int head_dim, const int32_t* positions, const float* cos,
                                  const float* sin) {
  rotate(dx, rows, heads, head_dim, positions, cos, sin, true);
}

void KernelContext::silu_mul_backward(float* d_gate, float* d_up, const float* d_out, const float* gate, const float* up, size_t length) {
  for_chunks(length, 1 << 15, [&](size_t begin, size_t end) {
    ops_.silu_mul_backward(d_gate + begin, d_up + begin, d_out + begin, gate + begin, up + begin, end - begin);
  });
}

void KernelContext::embed_backward(float* d_table, const float* d_out, const int32_t* ids, int count, int dim) {
  // Repeated ids add into the same row, so the rows go in order on one thread.
  for (int r = 0; r < count; r++) ops_.add(d_table + static_cast<size_t>(ids[r]) * dim, d_out + static_cast<size_t>(r) * dim, dim);
}

void KernelContext::attention_backward(float* dq, float* d_keys, float* d_values, const float* d_out, const float* q,
                                       const float* keys, const float* values, int rows, int start, const AttentionShape& shape) {
  const int hd = shape.head_dim;
  const int group = shape.heads / shape.kv_heads;
  const size_t kv_stride = static_cast<size_t>(shape.kv_heads) * hd;
  const size_t q_stride = static_cast<size_t>(shape.heads) * hd;
  const int width = start + rows;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  // Tasks: (kv head, chunk of rows). Query rows of several chunks read the same keys, so each task
  // sums its keys' and values' gradients privately; they are added in chunk order at the end. The
  // chunks depend on the shape only, so the result is the same whatever the thread count.
  const int chunks = std::max(1, std::min(rows, (8 + shape.kv_heads - 1) / shape.kv_heads));
  const int tasks = shape.kv_heads * chunks;
  const size_t private_size = static_cast<size_t>(width) * hd;
  std::vector<float> private_keys(private_size * tasks, 0.0f);
  std::vector<float> private_values(private_size * tasks, 0.0f);
  scratch_.reserve(2 * static_cast<size_t>(width));

  AttentionBackwardKernel kernel = nullptr;
#if defined(__x86_64__)
  if (level_ != SimdLevel::Scalar) kernel = attention_backward_avx2(hd);
#endif
  auto run = [&](int task, int thread) {
    const int kv_head = task / chunks;
    const int chunk = task % chunks;
    AttentionBackwardHead head;
    head.keys = keys + static_cast<size_t>(kv_head) * hd;
    head.values = values + static_cast<size_t>(kv_head) * hd;
    head.stride = kv_stride;
    head.d_keys = private_keys.data() + task * private_size;
    head.d_values = private_values.data() + task * private_size;
    head.head_dim = hd;
    head.scale = scale;
    head.scratch = scratch_.get(thread);
    // Rows are dealt out round-robin: later rows see more keys, so this balances the chunks.
    for (int r = chunk; r < rows; r += chunks) {
      head.visible = start + r + 1;
      for (int h = kv_head * group; h < (kv_head + 1) * group; h++) {
        const size_t offset = r * q_stride + static_cast<size_t>(h) * hd;
        head.query = q + offset;
        head.d_out = d_out + offset;
        head.d_query = dq + offset;
        if (kernel != nullptr) {
          kernel(head);
        } else {
          attention_backward_generic(ops_, head);
        }
      }
    }
  };
  const double work = static_cast<double>(rows) * width * shape.heads * hd;
  if (work < kSerialWork) {
    for (int task = 0; task < tasks; task++) run(task, 0);
  } else {
    pool_.parallel_for(tasks, run);
  }
  for_chunks(width, 64, [&](size_t begin, size_t end) {
    for (int kv_head = 0; kv_head < shape.kv_heads; kv_head++) {
      for (int chunk = 0; chunk < chunks; chunk++) {
        const size_t base = static_cast<size_t>(kv_head * chunks + chunk) * private_size;
        for (size_t j = begin; j < end; j++) {
          const size_t to = j * kv_stride + static_cast<size_t>(kv_head) * hd;
          ops_.add(d_keys + to, private_keys.data() + base + j * hd, hd);
          ops_.add(d_values + to, private_values.data() + base + j * hd, hd);
        }
      }
    }
  });
}

}  // namespace flywheel
