// SwiGLU's gate silu(g)·u and its backward, and the residual add.

#include "../context.h"

namespace flywheel {

void KernelContext::silu_mul(float* out, const float* gate, const float* up, size_t length) {
  for_chunks(length, kParallelElements, [&](size_t begin, size_t end) { ops_.silu_mul(out + begin, gate + begin, up + begin, end - begin); });
}

void KernelContext::silu_mul_backward(float* d_gate, float* d_up, const float* d_out, const float* gate, const float* up, size_t length) {
  for_chunks(length, 1 << 15, [&](size_t begin, size_t end) {
    ops_.silu_mul_backward(d_gate + begin, d_up + begin, d_out + begin, gate + begin, up + begin, end - begin);
  });
}

void KernelContext::add(float* x, const float* y, size_t length) {
  for_chunks(length, kParallelElements, [&](size_t begin, size_t end) { ops_.add(x + begin, y + begin, end - begin); });
}

}  // namespace flywheel
