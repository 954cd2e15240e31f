#include <cmath>

#include <cstddef>

#include "vector_ops.h"

namespace flywheel {

namespace {

float dot(const float* a, const float* b, int n) {
  float sum = 0;
  for (int i = 0; i < n; i++) sum += a[i] * b[i];
  return sum;
}

void axpy(float* y, float a, const float* x, int n) {
  for (int i = 0; i < n; i++) y[i] += a * x[i];
}

void dots(float* out, const float* a, const float* rows, int count, int n) {
  for (int j = 0; j < count; j++) out[j] = dot(a, rows + static_cast<size_t>(j) * n, n);
}

void axpys(float* y, const float* coefficients, const float* rows, int count, int n) {
  for (int i = 0; i < n; i++) y[i] = 0.0f;
  for (int p = 0; p < count; p++) {
    if (coefficients[p] != 0.0f) axpy(y, coefficients[p], rows + static_cast<size_t>(p) * n, n);
  }
}

float exp_shifted(float* x, int n, float shift) {
  float sum = 0;
  for (int i = 0; i < n; i++) {
    x[i] = std::exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

float max(const float* x, int n) {
  float best = -INFINITY;
  for (int i = 0; i < n; i++) best = x[i] > best ? x[i] : best;
  return best;
}

double sum_squares(const float* x, int n) {
  double sum = 0;
  for (int i = 0; i < n; i++) sum += static_cast<double>(x[i]) * x[i];
  return sum;
}

void scale_mul(float* out, const float* x, float s, const float* w, int n) {
  for (int i = 0; i < n; i++) out[i] = (x[i] * s) * w[i];
}

void silu_mul(float* out, const float* gate, const float* up, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void add(float* x, const float* y, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] += y[i];
}

void silu_mul_backward(float* d_gate, float* d_up, const float* d_out, const float* gate, const float* up, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const float g = gate[i];
    const float sigmoid = 1.0f / (1.0f + std::exp(-g));
    d_up[i] = d_out[i] * g * sigmoid;
    d_gate[i] = d_out[i] * up[i] * sigmoid * (1.0f + g * (1.0f - sigmoid));
  }
}

}  // namespace

const VectorOps& vector_ops_scalar() {
  static const VectorOps ops = {dot, axpy, dots, axpys, exp_shifted, max, sum_squares, scale_mul, silu_mul, add, silu_mul_backward};
  return ops;
}

}  // namespace flywheel
