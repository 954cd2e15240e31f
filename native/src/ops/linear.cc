// A linear layer y = x·Wᵀ (+ b): the forward on the packed weight, and the weight gradient for
// full-parameter training. (The input gradient dY·W is the forward against Wᵀ, packed by the caller.)
#include <vector>

#include "../context.h"

namespace flywheel {

void KernelContext::matmul(float* out, const float* x, int rows, const PackedMatrix& w, const float* bias) {
  flywheel::matmul(pool_, scratch_, matmul_kernels_, out, x, rows, w, bias);
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

}  // namespace flywheel
