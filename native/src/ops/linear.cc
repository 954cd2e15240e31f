// A linear layer y = x·Wᵀ (+ b): the forward on the packed weight, and the weight gradient for
// full-parameter training. (The input gradient dY·W is the forward against Wᵀ, packed by the caller.)
#include <algorithm>
#include <stdexcept>

#include "../context.h"

namespace flywheel {

void KernelContext::matmul(float* out, const float* x, int rows, const PackedMatrix& w, const float* bias, bool accumulate) {
  if (w.paired()) {
    flywheel::matmul_paired(pool_, bf16_rows_, out, x, rows, w, accumulate, matmul_depth_);
    return;
  }
  flywheel::matmul(pool_, scratch_, matmul_kernels_, out, x, rows, w, bias, accumulate, matmul_depth_);
}

void KernelContext::write_matrix(PackedMatrix& w, const float* values, bool transposed) {
  // Checked here, not in a task: an exception must not leave a pool thread.
  if (w.paired() && !transposed) throw std::invalid_argument("write_matrix: a paired matrix takes transposed values only");
  if (transposed && w.dtype() != DType::F32 && !w.paired()) throw std::invalid_argument("write_matrix: only an f32 or a paired matrix takes transposed values");
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
                                           int in_dim, bool bf16) {
  if (bf16) {
    linear_weight_backward_bf16(d_weight, dy, x, rows, out_dim, in_dim);
  } else {
    linear_weight_backward_f32(d_weight, dy, x, rows, out_dim, in_dim);
  }
  if (d_bias != nullptr) add_bias_gradient(d_bias, dy, rows, out_dim);
}

void KernelContext::linear_weight_backward_f32(float* d_weight, const float* dy, const float* x, int rows, int out_dim, int in_dim) {
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
}

void KernelContext::add_bias_gradient(float* d_bias, const float* dy, int rows, int out_dim) {
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

void KernelContext::linear_weight_backward_bf16(float* d_weight, const float* dy, const float* x, int rows, int out_dim, int in_dim) {
  // The f32 path's tasks and blocks over pairs of rows: dy's columns and x's rows rounded and
  // paired first (each once, on the pool), so the blocks read whole pairs.
  const Bf16Kernels& kernels = *bf16_kernels();
  const int row_pairs = (rows + 1) / 2;
  bf16_x_pairs_.resize(static_cast<size_t>(row_pairs) * in_dim);
  bf16_dy_pairs_.resize(static_cast<size_t>(row_pairs) * out_dim);
  uint32_t* x_pairs = bf16_x_pairs_.data();
  uint32_t* dy_pairs = bf16_dy_pairs_.data();
  const int chunks = pool_.size() * 4;
  pool_.parallel_for(2 * chunks, [&](int task, int) {
    const int chunk = task % chunks;
    if (task < chunks) {
      for (int s = chunk * row_pairs / chunks; s < (chunk + 1) * row_pairs / chunks; s++) {
        const float* even = x + static_cast<size_t>(2 * s) * in_dim;
        kernels.interleave(even, 2 * s + 1 < rows ? even + in_dim : nullptr, in_dim, x_pairs + static_cast<size_t>(s) * in_dim);
      }
    } else {
      kernels.pair_columns(dy, rows, out_dim, chunk * out_dim / chunks, (chunk + 1) * out_dim / chunks, dy_pairs, row_pairs);
    }
  });
  const int width = 64;
  const int input_blocks = (in_dim + width - 1) / width;
  const int output_tiles = (out_dim + kWeightGradientOutputs - 1) / kWeightGradientOutputs;
  const double work = static_cast<double>(rows) * out_dim * in_dim;
  const int wanted = work < kSerialWork ? 1 : (pool_.size() * 4 + input_blocks - 1) / input_blocks;
  const int runs = std::max(1, std::min(output_tiles, wanted));
  const int tiles_per_run = (output_tiles + runs - 1) / runs;
  constexpr int kPairChunk = 128;
  pool_.parallel_for(input_blocks * runs, [&](int task, int) {
    const int i0 = (task / runs) * width;
    const int inputs = std::min(width, in_dim - i0);
    const int first_tile = (task % runs) * tiles_per_run;
    const int end_tile = std::min(output_tiles, first_tile + tiles_per_run);
    for (int s0 = 0; s0 < row_pairs; s0 += kPairChunk) {
      const int chunk = std::min(kPairChunk, row_pairs - s0);
      for (int tile = first_tile; tile < end_tile; tile++) {
        const int o0 = tile * kWeightGradientOutputs;
        const int outputs = std::min(kWeightGradientOutputs, out_dim - o0);
        kernels.weight_gradient(d_weight + static_cast<size_t>(o0) * in_dim + i0, in_dim, dy_pairs + static_cast<size_t>(o0) * row_pairs + s0,
                                row_pairs, x_pairs + static_cast<size_t>(s0) * in_dim + i0, in_dim, chunk, outputs, inputs);
      }
    }
  });
}

}  // namespace flywheel
