// A linear layer y = x·Wᵀ (+ b): the forward on the packed weight (a paired one under the bf16
// forward; see matmul_bf16.h), and the weight gradient for full-parameter training. (The input
// gradient dY·W is the forward against Wᵀ, packed by the caller, or against a paired Wᵀ under the
// bf16 backward.)
#include <algorithm>
#include <stdexcept>

#include "../context.h"

namespace flywheel {

namespace {

// The weight gradients' split of dW [out_dim × in_dim] over the pool: a task is one block of
// `width` inputs (a column strip of x, which stays in cache) and a run of output tiles that sweep
// it; the `steps` (rows, or pairs of rows) go in chunks of `chunk`, so the strip fits the cache
// whatever their count. Every element's chain runs over the steps in order in one task, so the
// result does not depend on the thread count. block(o0, outputs, i0, inputs, s0, count).
template <typename Block>
void split_weight_gradient(ThreadPool& pool, bool serial, int steps, int chunk, int out_dim, int in_dim, int width, const Block& block) {
  const int input_blocks = (in_dim + width - 1) / width;
  const int output_tiles = (out_dim + kWeightGradientOutputs - 1) / kWeightGradientOutputs;
  const int wanted = serial ? 1 : (pool.size() * 4 + input_blocks - 1) / input_blocks;
  const int runs = std::max(1, std::min(output_tiles, wanted));
  const int tiles_per_run = (output_tiles + runs - 1) / runs;
  pool.parallel_for(input_blocks * runs, [&](int task, int) {
    const int i0 = (task / runs) * width;
    const int inputs = std::min(width, in_dim - i0);
    const int first_tile = (task % runs) * tiles_per_run;
    const int end_tile = std::min(output_tiles, first_tile + tiles_per_run);
    for (int s0 = 0; s0 < steps; s0 += chunk) {
      const int count = std::min(chunk, steps - s0);
      for (int tile = first_tile; tile < end_tile; tile++) {
        const int o0 = tile * kWeightGradientOutputs;
        block(o0, std::min(kWeightGradientOutputs, out_dim - o0), i0, inputs, s0, count);
      }
    }
  });
}

}  // namespace

void KernelContext::matmul(float* out, const float* x, int rows, const PackedMatrix& w, const float* bias, bool accumulate) {
  if (w.paired()) {
    flywheel::matmul_paired(pool_, bf16_rows_, out, x, rows, w, bias, accumulate, matmul_depth_);
    return;
  }
  flywheel::matmul(pool_, scratch_, matmul_kernels_, out, x, rows, w, bias, accumulate, matmul_depth_);
}

void KernelContext::write_matrix(PackedMatrix& w, const float* values, bool transposed) {
  // Checked here, not in a task: an exception must not leave a pool thread.
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
  const WeightGradientKernel kernel = matmul_kernels_.weight_gradient;
  const bool serial = static_cast<double>(rows) * out_dim * in_dim < kSerialWork;
  split_weight_gradient(pool_, serial, rows, 256, out_dim, in_dim, matmul_kernels_.weight_gradient_inputs,
                        [&](int o0, int outputs, int i0, int inputs, int r0, int count) {
                          kernel(d_weight + static_cast<size_t>(o0) * in_dim + i0, in_dim, dy + static_cast<size_t>(r0) * out_dim + o0, out_dim,
                                 x + static_cast<size_t>(r0) * in_dim + i0, in_dim, count, outputs, inputs);
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
  const bool serial = static_cast<double>(rows) * out_dim * in_dim < kSerialWork;
  split_weight_gradient(pool_, serial, row_pairs, 128, out_dim, in_dim, kernels.weight_gradient_inputs, [&](int o0, int outputs, int i0, int inputs, int s0, int count) {
    kernels.weight_gradient(d_weight + static_cast<size_t>(o0) * in_dim + i0, in_dim, dy_pairs + static_cast<size_t>(o0) * row_pairs + s0,
                            row_pairs, x_pairs + static_cast<size_t>(s0) * in_dim + i0, in_dim, count, outputs, inputs);
  });
}

}  // namespace flywheel
