// RMSNorm and its backward.
#include <algorithm>
#include <cmath>

#include "../context.h"

namespace flywheel {

void KernelContext::rms_norm(float* out, const float* x, const float* weight, int rows, int dim, float eps) {
  for_chunks(rows, std::max<size_t>(1, kParallelElements / dim), [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; row++) {
      const float* in = x + row * dim;
      const double mean = ops_.sum_squares(in, dim) / dim;
      const float inverse = static_cast<float>(1.0 / std::sqrt(mean + eps));
      ops_.scale_mul(out + row * dim, in, inverse, weight, dim);
    }
  });
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

}  // namespace flywheel
