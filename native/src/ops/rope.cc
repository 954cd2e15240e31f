// Rotary embedding and its backward: one rotation, by the angle or by its negation.
#include <algorithm>

#include "../context.h"

namespace flywheel {

void KernelContext::rope(float* x, int rows, int heads, int head_dim, const int32_t* positions, const float* cos,
                         const float* sin) {
  rotate(x, rows, heads, head_dim, positions, cos, sin, false);
}

void KernelContext::rope_backward(float* dx, int rows, int heads, int head_dim, const int32_t* positions, const float* cos,
                                  const float* sin) {
  rotate(dx, rows, heads, head_dim, positions, cos, sin, true);
}

void KernelContext::rotate(float* x, int rows, int heads, int head_dim, const int32_t* positions, const float* cos,
                           const float* sin, bool inverse) {
  const int half = head_dim / 2;
  // The inverse rotation is the rotation by the negated angle; negating the sine is exact.
  const float direction = inverse ? -1.0f : 1.0f;
  for_chunks(rows, std::max<size_t>(1, kParallelElements / (heads * head_dim)), [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; row++) {
      const float* c = cos + static_cast<size_t>(positions[row]) * half;
      const float* s = sin + static_cast<size_t>(positions[row]) * half;
      for (int head = 0; head < heads; head++) {
        float* v = x + (row * heads + head) * head_dim;
        for (int i = 0; i < half; i++) {
          const float first = v[i];
          const float second = v[i + half];
          const float sine = direction * s[i];
          v[i] = first * c[i] - second * sine;
          v[i + half] = second * c[i] + first * sine;
        }
      }
    }
  });
}

}  // namespace flywheel
