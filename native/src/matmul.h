// out[r, o] = Σ_k x[r, k]·w[o, k] (+ bias[o]) on a PackedMatrix, split over the thread pool.
//
// Batch invariance: every output is one chain of f32 fused multiply-adds over k = 0, 1, …, cols − 1
// starting from zero, then + bias (0 without one), whatever the number of rows in the call, the
// row's place in it, the thread count or which tile computes it. Tiles hide the FMA latency with
// independent outputs (more rows or more panels at once), never by splitting a sum, so a row alone
// (decode), a few rows and a prefill block get bit-identical results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "cpu.h"
#include "packed_matrix.h"
#include "thread_pool.h"
#include "scratch.h"

namespace flywheel {

// Which part of every output's chain over k one tile call computes: rows longer than a block of k
// run block by block, each output's partial sum kept in `out` between the calls, so the chain
// (and its bits) is the one a whole-row call computes.
enum class Chain {
  kWhole,   // from zero over all of k, then + bias
  kFirst,   // from zero over the first block; the partial sum is stored as it is
  kMiddle,  // from the partial sum in `out` over a middle block
  kLast,    // from the partial sum in `out` over the last block, then + bias
};
inline bool chain_resumes(Chain chain) { return chain == Chain::kMiddle || chain == Chain::kLast; }
inline bool chain_finishes(Chain chain) { return chain == Chain::kWhole || chain == Chain::kLast; }
// The part of the chain a block is: whether it resumes a partial sum and whether it finishes the row.
inline Chain chain_part(bool resume, bool finish) {
  return resume ? (finish ? Chain::kLast : Chain::kMiddle) : (finish ? Chain::kWhole : Chain::kFirst);
}

// Calls fn(resume, finish) with the chain's two flags as compile-time constants
// (std::bool_constant), so SIMD tiles pick their start and end without a branch in the loop.
template <typename Fn>
inline void with_chain_flags(Chain chain, Fn&& fn) {
  if (chain_resumes(chain)) {
    if (chain_finishes(chain)) return fn(std::true_type{}, std::true_type{});
    return fn(std::true_type{}, std::false_type{});
  }
  if (chain_finishes(chain)) return fn(std::false_type{}, std::true_type{});
  fn(std::false_type{}, std::false_type{});
}

// A run of `panels` consecutive panels (panel i at `panel + i * panel_bytes`, each cols × 16 values)
// against `rows` rows of x (row stride x_stride), written to the 16 outputs of each panel in each
// row of out (row stride out_stride; panel i's outputs at out + 16 i). Only the run's last panel may
// have fewer than 16 real outputs (`valid_last`). `bias` holds the run's outputs' biases, or is null.
// `chain` says which part of the sums over k the `cols` columns are.
using TileKernel = void (*)(const float* x, size_t x_stride, int rows, const void* panel, size_t panel_bytes, int panels,
                            int cols, float* out, size_t out_stride, int valid_last, const float* bias, Chain chain);

// Widens a whole panel (cols × 16 values of `dtype`) to f32 in the same layout.
using WidenPanel = void (*)(DType dtype, const void* panel, int cols, float* out);

// dW[o, i] += Σ_r dy[r, o]·x[r, i] over one block of dW: `outputs` (at most kWeightGradientOutputs)
// rows of dW from `d_weight`, `inputs` columns (at most the level's weight_gradient_inputs) from
// it; dy and x point at the block's first output and input column of row 0. Each element is one
// chain of f32 fused multiply-adds over r = 0, 1, …, rows − 1 starting from its current value, so
// the result does not depend on the thread count or the block layout. No transpose is needed:
// each row r is one outer product dy[r, block]ᵀ·x[r, block].
using WeightGradientKernel = void (*)(float* d_weight, size_t d_weight_stride, const float* dy, size_t dy_stride,
                                      const float* x, size_t x_stride, int rows, int outputs, int inputs);
constexpr int kWeightGradientOutputs = 6;

// Calls fn(std::integral_constant<int, O>{}) for O = outputs (1 … kWeightGradientOutputs; more
// counts as the most), so a SIMD level's weight-gradient block is compiled once per output count.
template <typename Fn>
inline void with_weight_gradient_outputs(int outputs, Fn&& fn) {
  switch (outputs) {
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    case 4: return fn(std::integral_constant<int, 4>{});
    case 5: return fn(std::integral_constant<int, 5>{});
    default: return fn(std::integral_constant<int, kWeightGradientOutputs>{});
  }
}

// with_weight_gradient_outputs, with also whether the block is ragged (fewer than `width` inputs)
// as a std::bool_constant: fn(outputs, ragged), each compiled once per combination.
template <typename Fn>
inline void with_weight_gradient_block(int outputs, int inputs, int width, Fn&& fn) {
  with_weight_gradient_outputs(outputs, [&](auto o) {
    if (inputs == width) return fn(o, std::false_type{});
    fn(o, std::true_type{});
  });
}

// The tile kernels of one SIMD level.
struct MatmulKernels {
  // Reads panels of the given dtype directly, converting as it goes; at most direct_rows rows a call.
  TileKernel direct[3];
  int direct_rows;
  // Reads f32 panels; at most wide_rows rows a call (the many-row GEMM path).
  TileKernel wide;
  int wide_rows;
  WidenPanel widen;
  // Up to how many rows a 16-bit panel is read directly; more rows widen it once per row block.
  int direct_max_rows;
  WeightGradientKernel weight_gradient;
  int weight_gradient_inputs;
};

const MatmulKernels& matmul_kernels_scalar();
#if defined(__x86_64__)
const MatmulKernels& matmul_kernels_avx2();
const MatmulKernels& matmul_kernels_avx512();
#endif

// Rows longer than `depth` columns run in blocks of it (see Chain): one block of a panel group stays
// in L2 while the row steps sweep it, where a vocabulary-long row (the LM head's input gradient)
// would stream the group's whole panels from memory once per row step. The bits do not depend on it.
constexpr int kMatmulDepth = 1024;

// With `accumulate`, every output's chain starts from its value in `out` instead of zero
// (out += x·wᵀ), one pass where a product and an add would be two.
void matmul(ThreadPool& pool, Scratch& scratch, const MatmulKernels& kernels, float* out, const float* x, int rows,
            const PackedMatrix& w, const float* bias, bool accumulate = false, int depth = kMatmulDepth);

}  // namespace flywheel
