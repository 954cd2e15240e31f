// The bf16 products (FLYWHEEL_FORWARD_PRECISION and FLYWHEEL_BACKWARD_PRECISION=bf16), AVX-512 BF16
// only: operands rounded to bf16 (nearest even), each output summed in f32 by vdpbf16ps, two
// products a step.
// Within a step the two products are added as the CPU's vdpbf16ps adds them, so the bits are this
// CPU's; every chain runs over the pairs in order whatever the rows, the blocking or the thread
// count, so a row alone (decode) and a row in a prefill block get the same bits. The kernels are in
// matmul_bf16_avx512.cc, the matmul's split (the forward, and the input gradient against a paired
// Wᵀ) in matmul.cc and the weight gradient's in ops/linear.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "matmul.h"

namespace flywheel {

// PairedTile: `rows` rows of x as bf16 pairs (uint32 each, row stride x_stride pairs) against
// `panels` panels of a paired matrix (panel i at panel + i · panel_stride values, `pairs` pairs of
// it from `panel`), written to out as TileKernel writes, + bias (null: none) where the chain finishes.
using PairedTile = void (*)(const uint32_t* x, size_t x_stride, int rows, const uint16_t* panel, size_t panel_stride, int panels,
                            int pairs, float* out, size_t out_stride, int valid_last, const float* bias, Chain chain);
// Rounds `rows` rows of x (row stride `cols`) to bf16, row r to out + r · stored_cols (an odd
// `cols` gets a zero after it, completing its last pair).
using RoundRows = void (*)(const float* x, int rows, int cols, uint16_t* out, int stored_cols);
// dW[o, i] += Σ_s dy_pairs[o, s] · x_pairs[s, i] over row pairs s: dy's column o as pairs of rows
// (dy_pairs [outputs × row_pairs], uint32 each, row stride dy_stride), and x's rows 2s and 2s + 1
// interleaved per input (x_pairs, row stride x_stride uint32); `outputs` ≤ kWeightGradientOutputs,
// `inputs` ≤ 64.
using PairedWeightGradient = void (*)(float* d_weight, size_t d_weight_stride, const uint32_t* dy_pairs, size_t dy_stride,
                                      const uint32_t* x_pairs, size_t x_stride, int row_pairs, int outputs, int inputs);
// Rounds `count` values of two rows into pairs, value i of `even` beside value i of `odd` (zeros
// where odd is null): two rows of x for the weight gradient, two of W for a paired Wᵀ.
using Interleave = void (*)(const float* even, const float* odd, int count, uint32_t* out);
// Rounds dy's columns [first, last) (dy: `rows` × `cols`) into out + o · row_pairs pairs, rows 2s
// and 2s + 1 of column o side by side (a missing odd row is a zero).
using PairColumns = void (*)(const float* dy, int rows, int cols, int first, int last, uint32_t* out, int row_pairs);

struct Bf16Kernels {
  PairedTile tile;
  int tile_rows;
  RoundRows round_rows;
  PairedWeightGradient weight_gradient;
  int weight_gradient_inputs;  // the most inputs one weight_gradient call takes
  Interleave interleave;
  PairColumns pair_columns;
};

// The bf16 kernels, or null where the CPU lacks AVX-512 BF16 (detect_bf16_products).
const Bf16Kernels* bf16_kernels();

// out (+)= bf16(x)·Wᵀ (+ bias) on a paired matrix w (its rows are the outputs), split over the pool
// like matmul (matmul.cc); `rounded` keeps x rounded to bf16 for the call. The caller checks
// bf16_kernels() first.
void matmul_paired(ThreadPool& pool, std::vector<uint16_t>& rounded, float* out, const float* x, int rows, const PackedMatrix& w,
                   const float* bias, bool accumulate, int depth);

}  // namespace flywheel
