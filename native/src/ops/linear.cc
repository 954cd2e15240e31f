// A linear layer y = x·Wᵀ (+ b): the forward on the packed weight, and the weight gradient for
// full-parameter training. (The input gradient dY·W is the forward against Wᵀ, packed by the caller.)
#include <algorithm>

#include "../context.h"

namespace flywheel {

void KernelContext::matmul(float* out, const float* x, int rows, const PackedMatrix& w, const float* bias) {
  flywheel::matmul(pool_, scratch_, matmul_kernels_, out, x, rows, w, bias);
}

void KernelContext::linear_weight_backward(float* d_weight, float* d_bias, const float* dy, const float* x, int rows, int out_dim,
                                           int in_dim) {
  // dW = dyᵀ·x is a matmul whose shared dimension is the rows: xᵀ packed as a weight matrix of
  // in_dim outputs over `rows` columns, against the rows of dyᵀ. The forward's tiles do the work.
  // The buffers are the context's and only grow, so a step's many calls allocate nothing.
  x_t_.assign_transposed(x, rows, in_dim);
  const size_t dy_size = static_cast<size_t>(out_dim) * rows;
  const size_t product_size = static_cast<size_t>(out_dim) * in_dim;
  if (dy_t_.size() < dy_size) dy_t_.resize(dy_size);
  if (product_.size() < product_size) product_.resize(product_size);
  float* dy_t = dy_t_.data();
  // dyᵀ in 16 × 16 tiles, so reads and writes both stay within a few cache lines.
  constexpr size_t kTile = 16;
  const size_t row_tiles = (static_cast<size_t>(rows) + kTile - 1) / kTile;
  for_chunks(row_tiles, std::max<size_t>(1, kParallelElements / (kTile * std::max(out_dim, 1))), [&](size_t begin, size_t end) {
    for (size_t tile = begin; tile < end; tile++) {
      const size_t r0 = tile * kTile;
      const size_t r1 = std::min<size_t>(rows, r0 + kTile);
      for (size_t o0 = 0; o0 < static_cast<size_t>(out_dim); o0 += kTile) {
        const size_t o1 = std::min<size_t>(out_dim, o0 + kTile);
        for (size_t r = r0; r < r1; r++) {
          const float* from = dy + r * out_dim;
          for (size_t o = o0; o < o1; o++) dy_t[o * rows + r] = from[o];
        }
      }
    }
  });
  flywheel::matmul(pool_, scratch_, matmul_kernels_, product_.data(), dy_t, out_dim, x_t_, nullptr);
  add(d_weight, product_.data(), product_size);
  if (d_bias != nullptr) {
    for (int o = 0; o < out_dim; o++) {
      const float* g = dy_t + static_cast<size_t>(o) * rows;
      double sum = 0;
      for (int r = 0; r < rows; r++) sum += g[r];
      d_bias[o] += static_cast<float>(sum);
    }
  }
}

}  // namespace flywheel
