// AVX-512 matmul tiles: one zmm holds a panel's 16 outputs, so a tile of R rows × P panels keeps
// R·P sums in registers (up to 12 of the 32) and each panel column feeds R fused multiply-adds from
// one weight load. Where the hardware runs 512-bit FMAs at full width (Zen 5, Intel server cores)
// this doubles the AVX2 tiles' arithmetic rate for prefill and batched decode. Each output is the
// same FMA chain as in the AVX2 tiles (see matmul.h), so the two levels agree bit for bit.
#include "matmul.h"
#include "simd.h"
#include "weight_gradient_avx512.h"

#if FLYWHEEL_HAVE_X86

#include <algorithm>
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

// R rows × P panels; `valid_last` outputs in the last of the P panels.
// Resume: the sums start from the partial sums in `out`; Finish: + bias at the end (see Chain).
template <int R, int P, DType D, bool Resume, bool Finish>
FLYWHEEL_AVX512 void tile(const float* x, size_t x_stride, const uint8_t* panel, size_t panel_bytes, int cols, float* out,
                          size_t out_stride, int valid_last, const float* bias) {
  __m512 acc[P][R];
#pragma GCC unroll 16
  for (int p = 0; p < P; p++) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (p == P - 1 ? valid_last : kPanel)) - 1);
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) acc[p][r] = Resume ? _mm512_maskz_loadu_ps(mask, out + r * out_stride + p * kPanel) : _mm512_setzero_ps();
  }
  for (int k = 0; k < cols; k++) {
#pragma GCC unroll 16
    for (int p = 0; p < P; p++) {
      const __m512 w = load_weights<D>(panel + p * panel_bytes, k);
#pragma GCC unroll 16
      for (int r = 0; r < R; r++) acc[p][r] = _mm512_fmadd_ps(_mm512_set1_ps(x[r * x_stride + k]), w, acc[p][r]);
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < P; p++) {
    const int valid = p == P - 1 ? valid_last : kPanel;
    const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1);
    // The last panel's padding outputs have no bias entry: the masked load skips them.
    const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(mask, bias + p * kPanel) : _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) _mm512_mask_storeu_ps(out + r * out_stride + p * kPanel, mask, Finish ? _mm512_add_ps(acc[p][r], b) : acc[p][r]);
  }
}

// Runs `panels` panels with R rows: P side by side while at least P remain, then one at a time.
template <int R, int P, DType D, bool Resume, bool Finish>
FLYWHEEL_AVX512 void run_chain(const float* x, size_t x_stride, const uint8_t* panel, size_t panel_bytes, int panels, int cols,
                               float* out, size_t out_stride, int valid_last, const float* bias) {
  int i = 0;
  if constexpr (P > 1) {
    for (; i + P <= panels; i += P) {
      const int valid = i + P == panels ? valid_last : kPanel;
      tile<R, P, D, Resume, Finish>(x, x_stride, panel + i * panel_bytes, panel_bytes, cols, out + i * kPanel, out_stride, valid,
                                    bias != nullptr ? bias + i * kPanel : nullptr);
    }
  }
  for (; i < panels; i++) {
    const int valid = i + 1 == panels ? valid_last : kPanel;
    tile<R, 1, D, Resume, Finish>(x, x_stride, panel + i * panel_bytes, panel_bytes, cols, out + i * kPanel, out_stride, valid,
                                  bias != nullptr ? bias + i * kPanel : nullptr);
  }
}

// The chain's part picks the tiles' start and end at compile time: the inner loop is the same for all.
template <int R, int P, DType D>
FLYWHEEL_AVX512 void run(const float* x, size_t x_stride, const uint8_t* panel, size_t panel_bytes, int panels, int cols,
                         float* out, size_t out_stride, int valid_last, const float* bias, Chain chain) {
  with_chain_flags(chain, [&](auto resume, auto finish) FLYWHEEL_AVX512 {
    run_chain<R, P, D, decltype(resume)::value, decltype(finish)::value>(x, x_stride, panel, panel_bytes, panels, cols, out, out_stride, valid_last, bias);
  });
}

template <DType D>
FLYWHEEL_AVX512 void direct(const float* x, size_t x_stride, int rows, const void* panel, size_t panel_bytes, int panels,
                            int cols, float* out, size_t out_stride, int valid_last, const float* bias, Chain chain) {
  const uint8_t* p = static_cast<const uint8_t*>(panel);
  switch (rows) {
    case 1: return run<1, 8, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 2: return run<2, 4, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 3: return run<3, 2, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 4: return run<4, 2, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 5: return run<5, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 6: return run<6, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 7: return run<7, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 8: return run<8, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 9: return run<9, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 10: return run<10, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 11: return run<11, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    default: return run<12, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
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

// The weight gradient's block (weight_gradient_avx512.h): per row, 4 loads of x and O broadcasts
// of dy feed 4·O fused multiply-adds.
template <int O, bool Ragged>
FLYWHEEL_AVX512 void weight_gradient_block(float* d_weight, size_t d_weight_stride, const float* dy, size_t dy_stride,
                                           const float* x, size_t x_stride, int rows, int inputs) {
  constexpr int V = kGradientBlockVectors;
  __mmask16 masks[V];
  gradient_block_masks(inputs, masks);
  __m512 acc[O][V];
  load_gradient_block<O, Ragged>(acc, d_weight, d_weight_stride, masks);
  for (int r = 0; r < rows; r++) {
    const float* xr = x + r * x_stride;
    const float* g = dy + r * dy_stride;
    __m512 xv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) xv[v] = Ragged ? _mm512_maskz_loadu_ps(masks[v], xr + 16 * v) : _mm512_loadu_ps(xr + 16 * v);
#pragma GCC unroll 8
    for (int o = 0; o < O; o++) {
      const __m512 go = _mm512_set1_ps(g[o]);
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) acc[o][v] = _mm512_fmadd_ps(go, xv[v], acc[o][v]);
    }
  }
  store_gradient_block<O, Ragged>(acc, d_weight, d_weight_stride, masks);
}

FLYWHEEL_AVX512 void weight_gradient(float* d_weight, size_t d_weight_stride, const float* dy, size_t dy_stride,
                                     const float* x, size_t x_stride, int rows, int outputs, int inputs) {
  with_weight_gradient_block(outputs, inputs, 64, [&](auto o, auto ragged) FLYWHEEL_AVX512 {
    weight_gradient_block<decltype(o)::value, decltype(ragged)::value>(d_weight, d_weight_stride, dy, dy_stride, x, x_stride, rows, inputs);
  });
}

}  // namespace

const MatmulKernels& matmul_kernels_avx512() {
  // 16-bit panels are read directly up to 16 rows (two 8-row tiles sharing each panel in cache);
  // beyond that each panel is widened once per row block and runs 12-row f32 tiles.
  static const MatmulKernels kernels = {
      {direct<DType::F32>, direct<DType::F16>, direct<DType::BF16>}, 8, direct<DType::F32>, 12, widen, 16, weight_gradient, 64};
  return kernels;
}

}  // namespace flywheel

#endif
