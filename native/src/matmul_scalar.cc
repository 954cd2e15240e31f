// Portable matmul tiles: plain loops the compiler vectorizes for the baseline instruction set.
// 16-bit panels are always widened to f32 first (one conversion per weight and row block). Each
// output is one chain of multiply-adds over the columns whatever the row count (see matmul.h).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "fp16.h"
#include "matmul.h"

namespace flywheel {

namespace {

constexpr int kRows = 4;

void tile_f32(const float* x, size_t x_stride, int rows, const void* panel, size_t panel_bytes, int panels, int cols,
              float* out, size_t out_stride, int valid_last, const float* bias, Chain chain) {
  for (int i = 0; i < panels; i++) {
    const float* w = reinterpret_cast<const float*>(static_cast<const uint8_t*>(panel) + i * panel_bytes);
    const int valid = i + 1 == panels ? valid_last : kPanel;
    float acc[kRows][kPanel] = {};
    if (chain_resumes(chain)) {
      for (int r = 0; r < rows; r++) {
        for (int j = 0; j < valid; j++) acc[r][j] = out[r * out_stride + i * kPanel + j];
      }
    }
    for (int k = 0; k < cols; k++) {
      const float* wk = w + static_cast<size_t>(k) * kPanel;
      for (int r = 0; r < rows; r++) {
        const float xv = x[r * x_stride + k];
        for (int j = 0; j < kPanel; j++) acc[r][j] += xv * wk[j];
      }
    }
    for (int r = 0; r < rows; r++) {
      for (int j = 0; j < valid; j++) {
        out[r * out_stride + i * kPanel + j] = chain_finishes(chain) ? acc[r][j] + (bias != nullptr ? bias[i * kPanel + j] : 0.0f) : acc[r][j];
      }
    }
  }
}

void widen(DType dtype, const void* panel, int cols, float* out) {
  const size_t count = static_cast<size_t>(cols) * kPanel;
  if (dtype == DType::F32) {
    std::memcpy(out, panel, count * sizeof(float));
    return;
  }
  const uint16_t* bits = static_cast<const uint16_t*>(panel);
  for (size_t i = 0; i < count; i++) out[i] = dtype == DType::F16 ? f16_to_f32(bits[i]) : bf16_to_f32(bits[i]);
}

// std::fma: one rounding per step, as the SIMD levels' fused multiply-adds.
void weight_gradient(float* d_weight, size_t d_weight_stride, const float* dy, size_t dy_stride, const float* x,
                     size_t x_stride, int rows, int outputs, int inputs) {
  for (int o = 0; o < outputs; o++) {
    float* out = d_weight + o * d_weight_stride;
    for (int r = 0; r < rows; r++) {
      const float g = dy[r * dy_stride + o];
      const float* xr = x + r * x_stride;
      for (int i = 0; i < inputs; i++) out[i] = std::fma(g, xr[i], out[i]);
    }
  }
}

constexpr int kWeightGradientInputs = 64;

}  // namespace

// direct_max_rows = 0: 16-bit panels always take the widening path, which these tiles rely on.
const MatmulKernels& matmul_kernels_scalar() {
  static const MatmulKernels kernels = {{tile_f32, tile_f32, tile_f32}, kRows, tile_f32, kRows, widen, 0, weight_gradient, kWeightGradientInputs};
  return kernels;
}

}  // namespace flywheel
