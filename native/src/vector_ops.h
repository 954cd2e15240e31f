// The vector primitives attention and the elementwise kernels are built from, one table per SIMD
// level. Sums are accumulated in f32 lanes; exp is a polynomial accurate to about one ulp.
#pragma once

#include <cstddef>

namespace flywheel {

struct VectorOps {
  float (*dot)(const float* a, const float* b, int n);
  // y += a · x
  void (*axpy)(float* y, float a, const float* x, int n);
  // out[j] = dot(a, rows + j·n, n) for j < count: the same bits as `count` dot calls, with each
  // load of a shared by several rows.
  void (*dots)(float* out, const float* a, const float* rows, int count, int n);
  // y = Σ_p coefficients[p] · rows[p·n .. p·n + n) over p < count with a nonzero coefficient, in
  // order: the same bits as zeroing y and calling axpy per such p, with y held in registers.
  void (*axpys)(float* y, const float* coefficients, const float* rows, int count, int n);
  // x[i] = exp(x[i] - shift); returns the sum of the new values.
  float (*exp_shifted)(float* x, int n, float shift);
  float (*max)(const float* x, int n);
  double (*sum_squares)(const float* x, int n);
  // out[i] = (x[i] · s) · w[i]
  void (*scale_mul)(float* out, const float* x, float s, const float* w, int n);
  // out[i] = silu(gate[i]) · up[i]
  void (*silu_mul)(float* out, const float* gate, const float* up, size_t n);
  // x[i] += y[i]
  void (*add)(float* x, const float* y, size_t n);
  // The backward of silu_mul: d_up = d_out·silu(gate), d_gate = d_out·up·σ(gate)·(1 + gate·(1 − σ(gate)))
  void (*silu_mul_backward)(float* d_gate, float* d_up, const float* d_out, const float* gate, const float* up, size_t n);
};

const VectorOps& vector_ops_scalar();
#if defined(__x86_64__)
const VectorOps& vector_ops_avx2();
// sums[j·n + i] = Σ_p coefficients[p·count + j] · rows[p·n + i] for j < count and i in [begin, end):
// count rows of axpys at once, each element with axpys' bits for finite rows, reading each row of
// `rows` once for all count sums instead of once per sum. begin is a multiple of 32.
void outer_sums_avx512(float* sums, const float* coefficients, int count, const float* rows, int k, int n, int begin, int end);
// Rows [begin, end) of c [· × n] = alpha · a·bᵀ (accumulate: c += that), a [· × k], b [n × k]: each
// row with the bits of vector_ops_avx2().dots and scale_store_avx512 on it alone, rows four at a time sharing
// each load of b. sums: 4 · n floats of scratch.
void row_dots_avx512(float* c, const float* a, const float* b, int n, int k, int begin, int end, float alpha, bool accumulate, float* sums);
// Rows [begin, end) of c [· × n] = alpha · a·b (accumulate: c += that), a [· × k] the coefficients,
// b [k × n]: each row with the bits of vector_ops_avx2().axpys and scale_store_avx512 on it alone, rows four at
// a time sharing each load of b.
void row_axpys_avx512(float* c, const float* a, const float* b, int n, int k, int begin, int end, float alpha, bool accumulate);
// out[j] = alpha · x[j] (accumulate: out[j] += alpha · x[j]) for j < n.
void scale_store_avx512(float* out, const float* x, float alpha, int n, bool accumulate);
#endif

}  // namespace flywheel
