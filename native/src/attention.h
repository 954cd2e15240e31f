// One query head's causal attention over `visible` cached positions: the kernels behind
// KernelContext::attention, per SIMD level.
#pragma once

#include <cstddef>

#include "vector_ops.h"

namespace flywheel {

struct AttentionHead {
  const float* query;   // head_dim values
  const float* keys;    // position j's key at keys + j * stride
  const float* values;  // position j's value at values + j * stride
  size_t stride;
  int visible;
  int head_dim;
  float scale;
  float* scores;  // scratch, `visible` values
  float* out;     // head_dim values
};

// A function computing one head; null where the SIMD level has no specialized kernel for a head_dim.
using AttentionHeadKernel = void (*)(const AttentionHead& head);

// Portable: dot products, softmax and weighted sum through the vector primitives.
void attention_head_generic(const VectorOps& ops, const AttentionHead& head);

#if defined(__x86_64__)
// AVX2 kernels for head_dim 64 and 128 (the sizes of the supported models), else null.
AttentionHeadKernel attention_head_avx2(int head_dim);
#endif

}  // namespace flywheel
