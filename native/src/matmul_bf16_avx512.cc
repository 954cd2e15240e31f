// The backward's bf16 products on AVX-512 BF16 (see matmul_bf16.h): vdpbf16ps adds two bf16 products
// into each of 16 f32 sums per instruction, twice the f32 FMA's multiply-adds per cycle. Tiles and
// blocks have the shapes of the f32 ones (matmul_avx512.cc), over pairs of columns or rows.
#include "matmul_bf16.h"
#include "simd.h"
#include "weight_gradient_avx512.h"

#if FLYWHEEL_HAVE_X86

#include <algorithm>
#include <cstdint>

#include "cpu.h"

namespace flywheel {

namespace {

FLYWHEEL_AVX512_BF16 inline __m512bh as_pairs(__m512i bits) { return reinterpret_cast<__m512bh&>(bits); }

// 32 f32 values rounded to bf16, in order, as one vector.
FLYWHEEL_AVX512_BF16 inline __m512i round32(__m512 low, __m512 high) {
  const __m512bh rounded = _mm512_cvtne2ps_pbh(high, low);
  return reinterpret_cast<const __m512i&>(rounded);
}

// R rows × P panels of 16 outputs, over `pairs` pairs of columns; `valid_last` outputs in the last
// panel. Resume: the sums start from out's values; Finish: + bias (null: none) at the end (see Chain).
template <int R, int P, bool Resume, bool Finish>
FLYWHEEL_AVX512_BF16 void paired_tile(const uint32_t* x, size_t x_stride, const uint16_t* panel, size_t panel_stride, int pairs,
                                      float* out, size_t out_stride, int valid_last, const float* bias) {
  __m512 acc[P][R];
#pragma GCC unroll 8
  for (int p = 0; p < P; p++) {
    const __mmask16 mask = lanes_left(p == P - 1 ? valid_last : kPanel);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) acc[p][r] = Resume ? _mm512_maskz_loadu_ps(mask, out + r * out_stride + p * kPanel) : _mm512_setzero_ps();
  }
  for (int j = 0; j < pairs; j++) {
    __m512i w[P];
#pragma GCC unroll 8
    for (int p = 0; p < P; p++) w[p] = _mm512_loadu_si512(panel + p * panel_stride + static_cast<size_t>(j) * 2 * kPanel);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      const __m512bh xr = as_pairs(_mm512_set1_epi32(static_cast<int>(x[r * x_stride + j])));
#pragma GCC unroll 8
      for (int p = 0; p < P; p++) acc[p][r] = _mm512_dpbf16_ps(acc[p][r], xr, as_pairs(w[p]));
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; p++) {
    const __mmask16 mask = lanes_left(p == P - 1 ? valid_last : kPanel);
    if (Finish && bias != nullptr) {
      // The last panel's padding outputs have no bias entry: the masked load skips them.
      const __m512 b = _mm512_maskz_loadu_ps(mask, bias + p * kPanel);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) acc[p][r] = _mm512_add_ps(acc[p][r], b);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) _mm512_mask_storeu_ps(out + r * out_stride + p * kPanel, mask, acc[p][r]);
  }
}

// R rows over `panels` panels: P side by side while P remain, then one at a time. Few rows take
// more panels at once, so decode still has independent sums to hide vdpbf16ps's latency.
template <int R, int P, bool Resume, bool Finish>
FLYWHEEL_AVX512_BF16 void paired_run(const uint32_t* x, size_t x_stride, const uint16_t* panel, size_t panel_stride, int panels,
                                     int pairs, float* out, size_t out_stride, int valid_last, const float* bias) {
  int i = 0;
  if constexpr (P > 1) {
    for (; i + P <= panels; i += P) {
      paired_tile<R, P, Resume, Finish>(x, x_stride, panel + i * panel_stride, panel_stride, pairs, out + i * kPanel, out_stride,
                                        i + P == panels ? valid_last : kPanel, bias != nullptr ? bias + i * kPanel : nullptr);
    }
  }
  for (; i < panels; i++) {
    paired_tile<R, 1, Resume, Finish>(x, x_stride, panel + i * panel_stride, panel_stride, pairs, out + i * kPanel, out_stride,
                                      i + 1 == panels ? valid_last : kPanel, bias != nullptr ? bias + i * kPanel : nullptr);
  }
}

constexpr int kPairedTileRows = 8;

template <bool Resume, bool Finish>
FLYWHEEL_AVX512_BF16 void paired_rows(const uint32_t* x, size_t x_stride, int rows, const uint16_t* panel, size_t panel_stride,
                                      int panels, int pairs, float* out, size_t out_stride, int valid_last, const float* bias) {
  switch (rows) {
    case 1: return paired_run<1, 8, Resume, Finish>(x, x_stride, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
    case 2: return paired_run<2, 4, Resume, Finish>(x, x_stride, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
    case 3: return paired_run<3, 4, Resume, Finish>(x, x_stride, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
    case 4: return paired_run<4, 2, Resume, Finish>(x, x_stride, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
    case 5: return paired_run<5, 2, Resume, Finish>(x, x_stride, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
    case 6: return paired_run<6, 2, Resume, Finish>(x, x_stride, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
    case 7: return paired_run<7, 2, Resume, Finish>(x, x_stride, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
    default: return paired_run<kPairedTileRows, 2, Resume, Finish>(x, x_stride, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
  }
}

FLYWHEEL_AVX512_BF16 void tile(const uint32_t* x, size_t x_stride, int rows, const uint16_t* panel, size_t panel_stride, int panels,
                               int pairs, float* out, size_t out_stride, int valid_last, const float* bias, Chain chain) {
  with_chain_flags(chain, [&](auto resume, auto finish) FLYWHEEL_AVX512_BF16 {
    paired_rows<decltype(resume)::value, decltype(finish)::value>(x, x_stride, rows, panel, panel_stride, panels, pairs, out, out_stride, valid_last, bias);
  });
}

FLYWHEEL_AVX512_BF16 void round_rows(const float* x, int rows, int cols, uint16_t* out, int stored_cols) {
  for (int r = 0; r < rows; r++) {
    const float* from = x + static_cast<size_t>(r) * cols;
    uint16_t* to = out + static_cast<size_t>(r) * stored_cols;
    for (int c = 0; c < stored_cols; c += 32) {
      const __m512 low = _mm512_maskz_loadu_ps(lanes_left(cols - c), from + c);
      const __m512 high = _mm512_maskz_loadu_ps(lanes_left(cols - c - 16), from + c + 16);
      const int left = stored_cols - c;
      _mm512_mask_storeu_epi16(to + c, left >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1ull << left) - 1), round32(low, high));
    }
  }
}

// The weight gradient's block (weight_gradient_avx512.h) over pairs of rows: per pair, 4 loads of
// x's pairs and O broadcasts of dy's feed 4·O two-product steps.
template <int O, bool Ragged>
FLYWHEEL_AVX512_BF16 void weight_gradient_block(float* d_weight, size_t d_weight_stride, const uint32_t* dy_pairs, size_t dy_stride,
                                                const uint32_t* x_pairs, size_t x_stride, int row_pairs, int inputs) {
  constexpr int V = kGradientBlockVectors;
  __mmask16 masks[V];
  gradient_block_masks(inputs, masks);
  __m512 acc[O][V];
  load_gradient_block<O, Ragged>(acc, d_weight, d_weight_stride, masks);
  for (int s = 0; s < row_pairs; s++) {
    const uint32_t* xs = x_pairs + s * x_stride;
    __m512bh xv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; v++) xv[v] = as_pairs(Ragged ? _mm512_maskz_loadu_epi32(masks[v], xs + 16 * v) : _mm512_loadu_si512(xs + 16 * v));
#pragma GCC unroll 8
    for (int o = 0; o < O; o++) {
      const __m512bh g = as_pairs(_mm512_set1_epi32(static_cast<int>(dy_pairs[o * dy_stride + s])));
#pragma GCC unroll 4
      for (int v = 0; v < V; v++) acc[o][v] = _mm512_dpbf16_ps(acc[o][v], g, xv[v]);
    }
  }
  store_gradient_block<O, Ragged>(acc, d_weight, d_weight_stride, masks);
}

FLYWHEEL_AVX512_BF16 void weight_gradient(float* d_weight, size_t d_weight_stride, const uint32_t* dy_pairs, size_t dy_stride,
                                          const uint32_t* x_pairs, size_t x_stride, int row_pairs, int outputs, int inputs) {
  with_weight_gradient_block(outputs, inputs, 64, [&](auto o, auto ragged) FLYWHEEL_AVX512_BF16 {
    weight_gradient_block<decltype(o)::value, decltype(ragged)::value>(d_weight, d_weight_stride, dy_pairs, dy_stride, x_pairs, x_stride, row_pairs, inputs);
  });
}

// The pair order of two rounded vectors: value i of the first, then value i of the second.
FLYWHEEL_AVX512_BF16 inline __m512i interleaved(__m512 first, __m512 second) {
  const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3,
                                         18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(order, round32(first, second));
}

FLYWHEEL_AVX512_BF16 void interleave(const float* even, const float* odd, int count, uint32_t* out) {
  for (int c = 0; c < count; c += 16) {
    const __mmask16 lanes = lanes_left(count - c);
    const __m512 a = _mm512_maskz_loadu_ps(lanes, even + c);
    const __m512 b = odd != nullptr ? _mm512_maskz_loadu_ps(lanes, odd + c) : _mm512_setzero_ps();
    _mm512_mask_storeu_epi32(out + c, lanes, interleaved(a, b));
  }
}

// Blocks of 16 columns × 16 row pairs: each row pair's 16 values rounded and interleaved into a
// small tile, whose columns are then copied out as runs of 16 consecutive pairs (one cache line
// per column instead of one per value).
FLYWHEEL_AVX512_BF16 void pair_columns(const float* dy, int rows, int cols, int first, int last, uint32_t* out, int row_pairs) {
  alignas(64) uint32_t tile[16][16];
  for (int c0 = first; c0 < last; c0 += 16) {
    const int count = std::min(16, last - c0);
    const __mmask16 lanes = lanes_left(count);
    for (int s0 = 0; s0 < row_pairs; s0 += 16) {
      const int pairs = std::min(16, row_pairs - s0);
      for (int i = 0; i < pairs; i++) {
        const int s = s0 + i;
        const float* even = dy + static_cast<size_t>(2 * s) * cols + c0;
        const __m512 a = _mm512_maskz_loadu_ps(lanes, even);
        const __m512 b = 2 * s + 1 < rows ? _mm512_maskz_loadu_ps(lanes, even + cols) : _mm512_setzero_ps();
        _mm512_store_si512(tile[i], interleaved(a, b));
      }
      for (int c = 0; c < count; c++) {
        uint32_t* to = out + static_cast<size_t>(c0 + c) * row_pairs + s0;
        for (int i = 0; i < pairs; i++) to[i] = tile[i][c];
      }
    }
  }
}

}  // namespace

const Bf16Kernels* bf16_kernels() {
  static const Bf16Kernels kernels = {tile, kPairedTileRows, round_rows, weight_gradient, 64, interleave, pair_columns};
  static const bool supported = detect_bf16_products();
  return supported ? &kernels : nullptr;
}

}  // namespace flywheel

#else

namespace flywheel {

const Bf16Kernels* bf16_kernels() { return nullptr; }

}  // namespace flywheel

#endif
