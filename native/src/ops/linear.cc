// A linear layer y = x·Wᵀ (+ b): the forward on the packed weight, and the weight gradient for
// full-parameter training. (The input gradient dY·W is the forward against Wᵀ, packed by the caller.)
#include <algorithm>
#include <stdexcept>

#include "../context.h"

namespace flywheel {

void KernelContext::matmul(float* out, const float* x, int rows, const PackedMatrix& w, const float* bias, bool accumulate) {
  flywheel::matmul(pool_, scratch_, matmul_kernels_, out, x, rows, w, bias, accumulate, matmul_depth_);
}

void KernelContext::write_matrix(PackedMatrix& w, const float* values, bool transposed) {
  // Checked here, not in a task: an exception must not leave a pool thread.
  if (transposed && w.dtype() != DType::F32) throw std::invalid_argument("write_matrix: only an f32 matrix takes transposed values");
  // At least 16k values a task: a small matrix is cheaper written by one thread than handed out.
  const size_t panel_values = static_cast<size_t>(kPanel) * w.cols();
  for_chunks(static_cast<size_t>(w.panels()), std::max<size_t>(1, (1 << 14) / panel_values), [&](size_t first, size_t last) {
    if (transposed) {
      w.write_transposed(values, static_cast<int>(first), static_cast<int>(last));
    } else {
      w.write(values, static_cast<int>(first), static_cast<int>(last));
    }
  });
}

void KernelContext::linear_weight_backward(float* d_weight, float* d_bias, const float* dy, const float* x, int rows, int out_dim,
                                           int in_dim) {
  // dW = dyᵀ·x as a sum of per-row outer products, read straight from dy and x (no transposes).
  // A task is one block of inputs (a column strip of x, which stays in cache) and a run of output
  // tiles that sweep it; rows go in chunks so the strip fits the cache whatever the row count.
  const WeightGradientKernel kernel = matmul_kernels_.weight_gradient;
  const int width = matmul_kernels_.weight_gradient_inputs;
  const int input_blocks = (in_dim + width - 1) / width;
  const int output_tiles = (out_dim + kWeightGradientOutputs - 1) / kWeightGradientOutputs;
  const double work = static_cast<double>(rows) * out_dim * in_dim;
  const int wanted = work < kSerialWork ? 1 : (pool_.size() * 4 + input_blocks - 1) / input_blocks;
  const int runs = std::max(1, std::min(output_tiles, wanted));
  const int tiles_per_run = (output_tiles + runs - 1) / runs;
  constexpr int kRowChunk = 256;
  pool_.parallel_for(input_blocks * runs, [&](int task, int) {
    const int i0 = (task / runs) * width;
    const int inputs = std::min(width, in_dim - i0);
    const int first_tile = (task % runs) * tiles_per_run;
    const int end_tile = std::min(output_tiles, first_tile + tiles_per_run);
    for (int r0 = 0; r0 < rows; r0 += kRowChunk) {
      const int chunk = std::min(kRowChunk, rows - r0);
      for (int tile = first_tile; tile < end_tile; tile++) {
        const int o0 = tile * kWeightGradientOutputs;
        const int outputs = std::min(kWeightGradientOutputs, out_dim - o0);
        kernel(d_weight + static_cast<size_t>(o0) * in_dim + i0, in_dim, dy + static_cast<size_t>(r0) * out_dim + o0, out_dim,
               x + static_cast<size_t>(r0) * in_dim + i0, in_dim, chunk, outputs, inputs);
      }
    }
  });
  if (d_bias != nullptr) {
    // Σ_r dy[r, o] in f64, row by row (each output's sum in row order, as before any blocking).
    if (bias_sums_.size() < static_cast<size_t>(out_dim)) bias_sums_.resize(out_dim);
    double* sums = bias_sums_.data();
    std::fill(sums, sums + out_dim, 0.0);
    for (int r = 0; r < rows; r++) {
      const float* g = dy + static_cast<size_t>(r) * out_dim;
      for (int o = 0; o < out_dim; o++) sums[o] += g[o];
    }
    for (int o = 0; o < out_dim; o++) d_bias[o] += static_cast<float>(sums[o]);
  }
}

}  // namespace flywheel
