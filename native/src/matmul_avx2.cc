// AVX2/FMA/F16C matmul tiles. A tile keeps R rows × P panels × 16 outputs of sums in registers
// (R·P·2 ymm) and walks the panels column by column: per column, 16 weights of each panel (two
// ymm, widened from f16/bf16 on the fly) and one broadcast x value per row feed 2·R·P fused
// multiply-adds. Every output is one FMA chain over the columns (see matmul.h): few-row tiles read
// several panels at once instead of splitting a sum, so the chains stay the same for any R.
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

// The masks of a panel row's `valid` real outputs, 8 a half.
FLYWHEEL_AVX2 inline void valid_masks(int valid, __m256i& mask0, __m256i& mask1) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  mask0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), lanes);
  mask1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(valid - 8), lanes);
}

// A panel row's partial sums stored by an earlier block of k (see Chain).
FLYWHEEL_AVX2 inline void load_row(const float* out, __m256& a0, __m256& a1, int valid) {
  __m256i mask0, mask1;
  valid_masks(valid, mask0, mask1);
  a0 = valid == kPanel ? _mm256_loadu_ps(out) : _mm256_maskload_ps(out, mask0);
  a1 = valid == kPanel ? _mm256_loadu_ps(out + 8) : _mm256_maskload_ps(out + 8, mask1);
}

// Adds the bias (0 without one) when the chain finishes, and stores the `valid` real outputs of a panel's row.
FLYWHEEL_AVX2 inline void store_row(float* out, __m256 a0, __m256 a1, int valid, const float* bias, bool finish) {
  __m256 b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
  __m256i mask0, mask1;
  valid_masks(valid, mask0, mask1);
  if (bias != nullptr) {
    // The last panel's padding outputs have no bias entry: masked loads skip them.
    b0 = valid == kPanel ? _mm256_loadu_ps(bias) : _mm256_maskload_ps(bias, mask0);
    b1 = valid == kPanel ? _mm256_loadu_ps(bias + 8) : _mm256_maskload_ps(bias + 8, mask1);
  }
  if (finish) {
    a0 = _mm256_add_ps(a0, b0);
    a1 = _mm256_add_ps(a1, b1);
  }
  if (valid == kPanel) {
    _mm256_storeu_ps(out, a0);
    _mm256_storeu_ps(out + 8, a1);
    return;
  }
  _mm256_maskstore_ps(out, mask0, a0);
  _mm256_maskstore_ps(out + 8, mask1, a1);
}

// R rows × P panels; `valid_last` outputs in the last of the P panels.
// Resume: the sums start from the partial sums in `out`; Finish: + bias at the end (see Chain).
template <int R, int P, DType D, bool Resume, bool Finish>
FLYWHEEL_AVX2 void tile(const float* x, size_t x_stride, const uint8_t* panel, size_t panel_bytes, int cols, float* out,
                        size_t out_stride, int valid_last, const float* bias) {
  // Fully unrolled loops over constant bounds, so GCC keeps `acc` in registers.
  __m256 acc[P][R][2];
#pragma GCC unroll 8
  for (int p = 0; p < P; p++) {
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      if (Resume) {
        load_row(out + r * out_stride + p * kPanel, acc[p][r][0], acc[p][r][1], p == P - 1 ? valid_last : kPanel);
      } else {
        acc[p][r][0] = acc[p][r][1] = _mm256_setzero_ps();
      }
    }
  }
  for (int k = 0; k < cols; k++) {
#pragma GCC unroll 8
    for (int p = 0; p < P; p++) {
      __m256 w0, w1;
      load_weights<D>(panel + p * panel_bytes, k, w0, w1);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) {
        const __m256 xv = _mm256_broadcast_ss(x + r * x_stride + k);
        acc[p][r][0] = _mm256_fmadd_ps(xv, w0, acc[p][r][0]);
        acc[p][r][1] = _mm256_fmadd_ps(xv, w1, acc[p][r][1]);
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; p++) {
    const int valid = p == P - 1 ? valid_last : kPanel;
    const float* b = bias != nullptr ? bias + p * kPanel : nullptr;
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) store_row(out + r * out_stride + p * kPanel, acc[p][r][0], acc[p][r][1], valid, b, Finish);
  }
}

// Runs `panels` panels with R rows: P side by side while at least P remain, then one at a time.
template <int R, int P, DType D, bool Resume, bool Finish>
FLYWHEEL_AVX2 void run_chain(const float* x, size_t x_stride, const uint8_t* panel, size_t panel_bytes, int panels, int cols,
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
FLYWHEEL_AVX2 void run(const float* x, size_t x_stride, const uint8_t* panel, size_t panel_bytes, int panels, int cols,
                       float* out, size_t out_stride, int valid_last, const float* bias, Chain chain) {
  with_chain_flags(chain, [&](auto resume, auto finish) FLYWHEEL_AVX2 {
    run_chain<R, P, D, decltype(resume)::value, decltype(finish)::value>(x, x_stride, panel, panel_bytes, panels, cols, out, out_stride, valid_last, bias);
  });
}

template <DType D>
FLYWHEEL_AVX2 void direct(const float* x, size_t x_stride, int rows, const void* panel, size_t panel_bytes, int panels,
                          int cols, float* out, size_t out_stride, int valid_last, const float* bias, Chain chain) {
  const uint8_t* p = static_cast<const uint8_t*>(panel);
  switch (rows) {
    case 1: return run<1, 4, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 2: return run<2, 2, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 3: return run<3, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 4: return run<4, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    case 5: return run<5, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
    default: return run<6, 1, D>(x, x_stride, p, panel_bytes, panels, cols, out, out_stride, valid_last, bias, chain);
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

// The weight gradient's block: O outputs × up to 16 inputs (2 ymm each), 2·O sums in registers.
// A partial block goes through a 16-float copy of each row, since AVX2 has no masked loads of f32
// as cheap as AVX-512's.
template <int O>
FLYWHEEL_AVX2 void weight_gradient_block(float* d_weight, size_t d_weight_stride, const float* dy, size_t dy_stride,
                                         const float* x, size_t x_stride, int rows, int inputs) {
  alignas(32) float row[16] = {};
  alignas(32) float sums[O][16] = {};
  __m256 acc[O][2];
  const bool full = inputs == 16;
#pragma GCC unroll 8
  for (int o = 0; o < O; o++) {
    if (!full) {
      for (int i = 0; i < inputs; i++) sums[o][i] = d_weight[o * d_weight_stride + i];
    }
    const float* from = full ? d_weight + o * d_weight_stride : sums[o];
    acc[o][0] = _mm256_loadu_ps(from);
    acc[o][1] = _mm256_loadu_ps(from + 8);
  }
  for (int r = 0; r < rows; r++) {
    const float* xr = x + r * x_stride;
    if (!full) {
      for (int i = 0; i < inputs; i++) row[i] = xr[i];
      xr = row;
    }
    const __m256 x0 = _mm256_loadu_ps(xr);
    const __m256 x1 = _mm256_loadu_ps(xr + 8);
    const float* g = dy + r * dy_stride;
#pragma GCC unroll 8
    for (int o = 0; o < O; o++) {
      const __m256 go = _mm256_set1_ps(g[o]);
      acc[o][0] = _mm256_fmadd_ps(go, x0, acc[o][0]);
      acc[o][1] = _mm256_fmadd_ps(go, x1, acc[o][1]);
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < O; o++) {
    float* to = full ? d_weight + o * d_weight_stride : sums[o];
    _mm256_storeu_ps(to, acc[o][0]);
    _mm256_storeu_ps(to + 8, acc[o][1]);
    if (!full) {
      for (int i = 0; i < inputs; i++) d_weight[o * d_weight_stride + i] = sums[o][i];
    }
  }
}

FLYWHEEL_AVX2 void weight_gradient(float* d_weight, size_t d_weight_stride, const float* dy, size_t dy_stride,
                                   const float* x, size_t x_stride, int rows, int outputs, int inputs) {
  with_weight_gradient_outputs(outputs, [&](auto o) FLYWHEEL_AVX2 {
    weight_gradient_block<decltype(o)::value>(d_weight, d_weight_stride, dy, dy_stride, x, x_stride, rows, inputs);
  });
}

}  // namespace

const MatmulKernels& matmul_kernels_avx2() {
  // f16/bf16 tiles use at most 4 rows (8 sums + 2 weights + 1 broadcast of the 16 ymm registers);
  // beyond 8 rows, widening each panel once per row block and running 6-row f32 tiles is faster.
  static const MatmulKernels kernels = {
      {direct<DType::F32>, direct<DType::F16>, direct<DType::BF16>}, 4, direct<DType::F32>, 6, widen, 8, weight_gradient, 16};
  return kernels;
}

}  // namespace flywheel

#endif
