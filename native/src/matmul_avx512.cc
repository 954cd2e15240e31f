// AVX-512 matmul tiles: one zmm holds a panel's 16 outputs, so a tile of R rows keeps R sums in
// registers (up to 12 of the 32) and each panel column feeds R fused multiply-adds from one weight
// load. Where the hardware runs 512-bit FMAs at full width (Zen 5, Intel server cores) this doubles
// the AVX2 tiles' arithmetic rate for prefill and batched decode.
#include "matmul.h"
#include "simd.h"

#if FLYWHEEL_HAVE_X86

#include <cstdint>

namespace flywheel {

namespace {

template <DType D>
FLYWHEEL_AVX512 inline __m512 load_weights(const void* panel, int k) {
  if constexpr (D == DType::F32) {
    return _mm512_loadu_ps(static_cast<const float*>(panel) + static_cast<size_t>(k) * kPanel);
  } else {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(panel) + static_cast<size_t>(k) * kPanel));
    if constexpr (D == DType::F16) {
      return _mm512_cvtph_ps(bits);
    } else {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
    }
  }
}

// R rows; U columns per step with separate sums, so few-row tiles are not bound by FMA latency.
template <int R, int U, DType D>
FLYWHEEL_AVX512 void tile(const float* x, size_t x_stride, const void* panel, int cols, float* out, size_t out_stride,
                          int valid, const float* bias16) {
  __m512 acc[U][R];
#pragma GCC unroll 16
  for (int u = 0; u < U; u++) {
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) acc[u][r] = _mm512_setzero_ps();
  }
  int k = 0;
  for (; k + U <= cols; k += U) {
#pragma GCC unroll 16
    for (int u = 0; u < U; u++) {
      const __m512 w = load_weights<D>(panel, k + u);
#pragma GCC unroll 16
      for (int r = 0; r < R; r++) acc[u][r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * x_stride + k + u]), w, acc[u][r]);
    }
  }
  for (; k < cols; k++) {
    const __m512 w = load_weights<D>(panel, k);
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) acc[0][r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * x_stride + k]), w, acc[0][r]);
  }
  const __m512 bias = _mm512_loadu_ps(bias16);
  const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1);
#pragma GCC unroll 16
  for (int r = 0; r < R; r++) {
    __m512 sum = acc[0][r];
#pragma GCC unroll 16
    for (int u = 1; u < U; u++) sum = _mm512_add_ps(sum, acc[u][r]);
    _mm512_mask_storeu_ps(out + r * out_stride, mask, _mm512_add_ps(sum, bias));
  }
}

template <DType D>
FLYWHEEL_AVX512 void direct(const float* x, size_t x_stride, int rows, const void* panel, int cols, float* out,
                            size_t out_stride, int valid, const float* bias16) {
  switch (rows) {
    case 1: return tile<1, 4, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 2: return tile<2, 2, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 3: return tile<3, 2, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 4: return tile<4, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 5: return tile<5, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 6: return tile<6, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 7: return tile<7, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 8: return tile<8, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 9: return tile<9, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 10: return tile<10, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    case 11: return tile<11, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
    default: return tile<12, 1, D>(x, x_stride, panel, cols, out, out_stride, valid, bias16);
  }
}

FLYWHEEL_AVX512 void widen(DType dtype, const void* panel, int cols, float* out) {
  for (int k = 0; k < cols; k++) {
    __m512 w;
    if (dtype == DType::F16) {
      w = load_weights<DType::F16>(panel, k);
    } else if (dtype == DType::BF16) {
      w = load_weights<DType::BF16>(panel, k);
    } else {
      w = load_weights<DType::F32>(panel, k);
    }
    _mm512_storeu_ps(out + static_cast<size_t>(k) * kPanel, w);
  }
}

}  // namespace

const MatmulKernels& matmul_kernels_avx512() {
  // 16-bit panels are read directly up to 16 rows (two 8-row tiles sharing each panel in cache);
  // beyond that each panel is widened once per row block and runs 12-row f32 tiles.
  static const MatmulKernels kernels = {
      {direct<DType::F32>, direct<DType::F16>, direct<DType::BF16>}, 8, direct<DType::F32>, 12, widen, 16};
  return kernels;
}

}  // namespace flywheel

#endif
