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
  // Rows [begin, end); the weight's gradient, if any, added into `weight_sums` row by row.
  auto run_rows = [&](size_t begin, size_t end, float* weight_sums) {
    for (size_t r = begin; r < end; r++) {
      const float* xr = x + r * dim;
      const float* gr = dy + r * dim;
      float* out = dx + r * dim;
      double square_lanes[8] = {};
      double dot_lanes[8] = {};
      int i = 0;
      for (; i + 8 <= dim; i += 8) {
        for (int l = 0; l < 8; l++) {
          square_lanes[l] += static_cast<double>(xr[i + l]) * xr[i + l];
          dot_lanes[l] += static_cast<double>(gr[i + l]) * weight[i + l] * xr[i + l];
        }
      }
      for (; i < dim; i++) {
        square_lanes[0] += static_cast<double>(xr[i]) * xr[i];
        dot_lanes[0] += static_cast<double>(gr[i]) * weight[i] * xr[i];
      }
      const double squares = sum_lanes(square_lanes);
      const double dot = sum_lanes(dot_lanes);
      const double inverse = 1.0 / std::sqrt(squares / dim + eps);
      const float scale = static_cast<float>(inverse);
      const float correction = static_cast<float>(inverse * inverse * inverse * dot / dim);
      if (weight_sums != nullptr) {
        for (int i = 0; i < dim; i++) weight_sums[i] += gr[i] * xr[i] * scale;
      }
      if (accumulate) {
        for (int i = 0; i < dim; i++) out[i] += scale * weight[i] * gr[i] - xr[i] * correction;
      } else {
        for (int i = 0; i < dim; i++) out[i] = scale * weight[i] * gr[i] - xr[i] * correction;
      }
    }
  };
  if (d_weight == nullptr) {
    for_chunks(rows, std::max<size_t>(1, (1 << 15) / dim), [&](size_t begin, size_t end) { run_rows(begin, end, nullptr); });
    return;
  }
  // The weight's gradient sums over rows: each of a fixed number of row blocks (set by the shape,
  // never by the thread count, so the bits are the same on any pool) sums its rows from zero, and
  // the blocks' sums are added in order.
  const size_t blocks = std::min<size_t>(16, std::max<size_t>(1, static_cast<size_t>(rows) * dim / (1 << 14)));
  const size_t size = (rows + blocks - 1) / blocks;
  if (blocks == 1) {
    run_rows(0, rows, d_weight);
    return;
  }
  std::vector<float>& sums = norm_weight_sums_;
  sums.assign(blocks * dim, 0.0f);
  pool_.parallel_for(static_cast<int>(blocks), [&](int block, int) {
    const size_t begin = block * size;
    run_rows(begin, std::min<size_t>(rows, begin + size), sums.data() + block * dim);
  });
  for (size_t block = 0; block < blocks; block++) {
    for (int i = 0; i < dim; i++) d_weight[i] += sums[block * dim + i];
  }
}

}  // namespace flywheel
