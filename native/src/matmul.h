// out[r, o] = Σ_k x[r, k]·w[o, k] (+ bias[o]) on a PackedMatrix, split over the thread pool.
#pragma once

#include <cstddef>

#include "cpu.h"
#include "packed_matrix.h"
#include "thread_pool.h"
#include "scratch.h"

namespace flywheel {

// One tile: `rows` rows of x (row stride x_stride) against one panel of `cols` columns, written to
// `valid` (≤ 16) outputs of each of those rows of out (row stride out_stride), plus bias16 (16
// values, never null).
using TileKernel = void (*)(const float* x, size_t x_stride, int rows, const void* panel, int cols, float* out,
                            size_t out_stride, int valid, const float* bias16);

// Widens a whole panel (cols × 16 values of `dtype`) to f32 in the same layout.
using WidenPanel = void (*)(DType dtype, const void* panel, int cols, float* out);

// The tile kernels of one SIMD level.
struct MatmulKernels {
  // Reads a panel of the given dtype directly, converting as it goes; at most direct_rows rows a call.
  TileKernel direct[3];
  int direct_rows;
  // Reads an f32 panel; at most wide_rows rows a call (the many-row GEMM path).
  TileKernel wide;
  int wide_rows;
  WidenPanel widen;
  // Up to how many rows a 16-bit panel is read directly; more rows widen it once per row block.
  int direct_max_rows;
};

const MatmulKernels& matmul_kernels_scalar();
#if defined(__x86_64__)
const MatmulKernels& matmul_kernels_avx2();
const MatmulKernels& matmul_kernels_avx512();
#endif

void matmul(ThreadPool& pool, Scratch& scratch, const MatmulKernels& kernels, float* out, const float* x, int rows,
            const PackedMatrix& w, const float* bias);

}  // namespace flywheel
