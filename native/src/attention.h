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

// The backward of one query head over `visible` positions: recomputes the probabilities P from
// the query and keys, then with dP_j = dO·v_j and D = Σ P_j dP_j, dS_j = P_j (dP_j − D) · scale:
// writes dq = Σ dS_j k_j and adds dS_j q into d_keys[j], P_j dO into d_values[j].
struct AttentionBackwardHead {
  const float* query;
  const float* d_out;
  float* d_query;
  const float* keys;    // position j at keys + j * stride
  const float* values;  // position j at values + j * stride
  size_t stride;
  float* d_keys;        // position j at d_keys + j * head_dim
  float* d_values;      // position j at d_values + j * head_dim
  int visible;
  int head_dim;
  float scale;
  float* scratch;       // 2 · visible values
};

using AttentionBackwardKernel = void (*)(const AttentionBackwardHead& head);

// The backward of `heads` query heads of one row that share a kv head (consecutive heads: head g's
// query, dO and dq at query + g·head_dim, …). One pass over the keys serves all of them, so each
// key and value is read, and each d_keys/d_values row read and written, once instead of per head.
// Every d_keys/d_values element gets the same fused multiply-adds in the same order (heads in
// order) as `heads` calls of the single-head kernel; dq may be summed in another order.
struct AttentionBackwardHeads {
  const float* query;
  const float* d_out;
  float* d_query;
  int heads;
  const float* keys;
  const float* values;
  size_t stride;
  float* d_keys;
  float* d_values;
  int visible;
  int head_dim;
  float scale;
  float* scratch;  // 2 · heads · visible values
};

using AttentionBackwardGroupKernel = void (*)(const AttentionBackwardHeads& heads);

// The forward of `heads` consecutive query heads of one row that share a kv head, over keys stored
// transposed (many query rows: prefill and scoring). Key j's dimension d is at
// keys_t[d · keys_t_stride + j], zero past the last key, keys_t_stride a multiple of 16, so 16
// scores come from vertical fused multiply-adds. Every score is the same f32 operations in the same
// order as the single-head kernel's dot product (per-lane chains over the head's 16-float chunks,
// then the fixed tree of 15 adds across lanes), and the softmax and weighted sum are that kernel's:
// the outputs equal it bit for bit, so decode (one row, the single-head kernel) and prefill agree.
struct AttentionHeadsTransposed {
  const float* query;  // heads · head_dim values
  float* out;          // heads · head_dim values
  int heads;
  const float* keys_t;
  size_t keys_t_stride;
  const float* values;  // position j's value at values + j * stride
  size_t stride;
  int visible;
  int head_dim;
  float scale;
  float* scratch;  // heads · keys_t_stride + heads · head_dim values
};

using AttentionTransposedKernel = void (*)(const AttentionHeadsTransposed& heads);

// Writes keys_t[d · keys_t_stride + j] = keys[j · stride + d] for j < count, zero up to keys_t_stride.
void transpose_keys(float* keys_t, size_t keys_t_stride, const float* keys, size_t stride, int count, int head_dim);

void attention_backward_generic(const VectorOps& ops, const AttentionBackwardHead& head);

#if defined(__x86_64__)
// AVX2 kernels for head_dim 32, 64 and 128, else null.
AttentionHeadKernel attention_head_avx2(int head_dim);
AttentionBackwardKernel attention_backward_avx2(int head_dim);
// AVX-512 kernels for the same head sizes, else null (the backward takes a kv head's query heads at once).
AttentionHeadKernel attention_head_avx512(int head_dim);
AttentionBackwardGroupKernel attention_backward_group_avx512(int head_dim);
AttentionTransposedKernel attention_transposed_avx512(int head_dim);
#endif

}  // namespace flywheel
