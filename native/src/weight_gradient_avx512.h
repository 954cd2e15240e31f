// The AVX-512 weight gradients' block of dW in registers: O outputs × up to 64 inputs, four
// vectors of 16 sums an output, loaded from dW and stored back. A ragged block (fewer than 64
// inputs) masks its loads and stores; a whole one does not, which keeps the masks out of the loop
// between (they were reloaded from the stack on every row). The f32 block (matmul_avx512.cc) and
// the bf16 one (matmul_bf16_avx512.cc) differ only in their multiply-adds.
#pragma once

#include "simd.h"

#if FLYWHEEL_HAVE_X86

#include <cstddef>

namespace flywheel {

constexpr int kGradientBlockVectors = 4;

FLYWHEEL_AVX512 inline void gradient_block_masks(int inputs, __mmask16 (&masks)[kGradientBlockVectors]) {
#pragma GCC unroll 4
  for (int v = 0; v < kGradientBlockVectors; v++) masks[v] = lanes_left(inputs - 16 * v);
}

template <int O, bool Ragged>
FLYWHEEL_AVX512 inline void load_gradient_block(__m512 (&acc)[O][kGradientBlockVectors], const float* d_weight, size_t stride,
                                                const __mmask16 (&masks)[kGradientBlockVectors]) {
#pragma GCC unroll 8
  for (int o = 0; o < O; o++) {
#pragma GCC unroll 4
    for (int v = 0; v < kGradientBlockVectors; v++) {
      const float* from = d_weight + o * stride + 16 * v;
      acc[o][v] = Ragged ? _mm512_maskz_loadu_ps(masks[v], from) : _mm512_loadu_ps(from);
    }
  }
}

template <int O, bool Ragged>
FLYWHEEL_AVX512 inline void store_gradient_block(const __m512 (&acc)[O][kGradientBlockVectors], float* d_weight, size_t stride,
                                                 const __mmask16 (&masks)[kGradientBlockVectors]) {
#pragma GCC unroll 8
  for (int o = 0; o < O; o++) {
#pragma GCC unroll 4
    for (int v = 0; v < kGradientBlockVectors; v++) {
      float* to = d_weight + o * stride + 16 * v;
      if (Ragged) {
        _mm512_mask_storeu_ps(to, masks[v], acc[o][v]);
      } else {
        _mm512_storeu_ps(to, acc[o][v]);
      }
    }
  }
}

}  // namespace flywheel

#endif
