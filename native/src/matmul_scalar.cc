// Portable matmul tiles: plain loops the compiler vectorizes for the baseline instruction set.
// 16-bit panels are always widened to f32 first (one conversion per weight and row block).
#include <cstdint>
#include <cstring>

#include "fp16.h"
#include "matmul.h"

namespace flywheel {

namespace {

constexpr int kRows = 4;

void tile_f32(const float* x, size_t x_stride, int rows, const void* panel, int cols, float* out, size_t out_stride,
              int valid, const float* bias16) {
  const float* w = static_cast<const float*>(panel);
  float acc[kRows][kPanel] = {};
  for (int k = 0; k < cols; k++) {
    const float* wk = w + static_cast<size_t>(k) * kPanel;
    for (int r = 0; r < rows; r++) {
      const float xv = x[r * x_stride + k];
      for (int j = 0; j < kPanel; j++) acc[r][j] += xv * wk[j];
    }
  }
  for (int r = 0; r < rows; r++) {
    for (int j = 0; j < valid; j++) out[r * out_stride + j] = acc[r][j] + bias16[j];
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

}  // namespace

// direct_max_rows = 0: 16-bit panels always take the widening path, which these tiles rely on.
const MatmulKernels& matmul_kernels_scalar() {
  static const MatmulKernels kernels = {{tile_f32, tile_f32, tile_f32}, kRows, tile_f32, kRows, widen, 0};
  return kernels;
}

}  // namespace flywheel
