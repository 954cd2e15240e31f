// AVX2/FMA/F16C matmul tiles. A tile keeps R rows × 16 outputs of sums in registers (R × 2 ymm)
// and walks the panel column by column: per column, 16 weights (two ymm, widened from f16/bf16
// on the fly) and one broadcast x value per row feed 2R fused multiply-adds.
#include "matmul.h"
#include "simd.h"

#if FLYWHEEL_HAVE_X86

#include <cstdint>

namespace flywheel {

namespace {

template <DType D>
FLYWHEEL_AVX2 inline void load_weights(const void* panel, int k, __m256& w0, __m256& w1) {
  if constexpr (D == DType::F32) {
    const float* w = static_cast<const float*>(panel) + static_cast<size_t>(k) * kPanel;
    w0 = _mm256_loadu_ps(w);
    w1 = _mm256_loadu_ps(w + 8);
  } else {
    const __m128i* w = reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(panel) + static_cast<size_t>(k) * kPanel);
    const __m128i lo = _mm_loadu_si128(w);
    const __m128i hi = _mm_loadu_si128(w + 1);
    if constexpr (D == DType::F16) {
      w0 = _mm256_cvtph_ps(lo);
      w1 = _mm256_cvtph_ps(hi);
    } else {
      // bf16 is the upper half of an f32.
      w0 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(lo), 16));
      w1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(hi), 16));
    }
  }
}

FLYWHEEL_AVX2 inline void store_row(float* out, __m256 a0, __m256 a1, int valid, const float* bias16) {
  a0 = _mm256_add_ps(a0, _mm256_loadu_ps(bias16));
  a1 = _mm256_add_ps(a1, _mm256_loadu_ps(bias16 + 8));
  if (valid == kPanel) {
    _mm256_storeu_ps(out, a0);
    _mm256_storeu_ps(out + 8, a1);
    return;
  }
  // The last panel's padding outputs do not exist in `out`: masked stores skip them.
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), lanes), a0);
  _mm256_maskstore_ps(out + 8, _mm256_cmpgt_epi32(_mm256_set1_epi32(valid - 8), lanes), a1);
}

// R rows; U columns per step with separate sums, so few-row tiles are not bound by FMA latency.
template <int R, int U, DType D>
FLYWHEEL_AVX2 void tile(const float* x, size_t x_stride, const void* panel, int cols, float* out, size_t out_stride,
                        int valid, const float* bias16) {
  // Fully unrolled loops over constant bounds, so GCC keeps `acc` in registers.
  __m256 acc[U][R][2];
#pragma GCC unroll 8
  for (int u = 0; u < U; u++) {
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) acc[u][r][0] = acc[u][r][1] = _mm256_setzero_ps();
  }
  int k = 0;
  for (; k + U <= cols; k += U) {
#pragma GCC unroll 8
    for (int u = 0; u < U; u++) {
      __m256 w0, w1;
      load_weights<D>(panel, k + u, w0, w1);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) {
        const __m256 xv = _mm256_broadcast_ss(x + r * x_stride + k + u);
        acc[u][r][0] = _mm256_fmadd_ps(xv, w0, acc[u][r][0]);
        acc[u][r][1] = _mm256_fmadd_ps(xv, w1, acc[u][r][1]);
      }
    }
  }
  for (; k < cols; k++) {
    __m256 w0, w1;
    load_weights<D>(panel, k, w0, w1);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      const __m256 xv = _mm256_broadcast_ss(x + r * x_stride + k);
      acc[0][r][0] = _mm256_fmadd_ps(xv, w0, acc[0][r][0]);
      acc[0][r][1] = _mm256_fmadd_ps(xv, w1, acc[0][r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    __m256 a0 = acc[0][r][0], a1 = acc[0][r][1];
#pragma GCC unroll 8
    for (int u = 1; u < U; u++) {
      a0 = _mm256_add_ps(a0, acc[u][r][0]);
      a1 = _mm256_add_ps(a1, acc[u][r][1]);
    }
    store_row(out + r * out_stride, a0, a1, valid, bias16);
  }
}

template <DType D>
FLYWHEEL_AVX2 void direct(const float* x, size_t x_stride, int rows, const void* panel, int cols, float* out,
                          size_t out_stride, int valid, const float* bias16) {
  switch (rows) {
    case 1: return tile<1, 4, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 2: return tile<2, 2, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 3: return tile<3, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 4: return tile<4, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 5: return tile<5, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    default: return tile<6, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
  }
}

FLYWHEEL_AVX2 void widen(DType dtype, const void* panel, int cols, float* out) {
  for (int k = 0; k < cols; k++) {
    __m256 w0, w1;
    if (dtype == DType::F16) {
      load_weights<DType::F16>(panel, k, w0, w1);
    } else if (dtype == DType::BF16) {
      load_weights<DType::BF16>(panel, k, w0, w1);
    } else {
      load_weights<DType::F32>(panel, k, w0, w1);
    }
    _mm256_storeu_ps(out + static_cast<size_t>(k) * kPanel, w0);
    _mm256_storeu_ps(out + static_cast<size_t>(k) * kPanel + 8, w1);
  }
}

}  // namespace

const MatmulKernels& matmul_kernels_avx2() {
  // f16/bf16 tiles use at most 4 rows (8 sums + 2 weights + 1 broadcast of the 16 ymm registers);
  // beyond 8 rows, widening each panel once per row block and running 6-row f32 tiles is faster.
  static const MatmulKernels kernels = {
      {direct<DType::F32>, direct<DType::F16>, direct<DType::BF16>}, 4, direct<DType::F32>, 6, widen, 8};
  return kernels;
}

}  // namespace flywheel

#endif
