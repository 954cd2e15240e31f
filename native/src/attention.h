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

// The backward of a block of at most kAttentionBackwardRows consecutive query rows, for the query
// heads that share one kv head: each head's P and dS for the block at once (against keys and
// values stored as transpose_keys lays them out), then dq written and dS·q, P·dO added into the
// block's task-private d_keys/d_values rows (position j at j · head_dim).
constexpr int kAttentionBackwardRows = 16;

struct AttentionBackwardBlock {
  const float* query;  // row r's head g at query + r · row_stride + g · head_dim
  const float* d_out;  // the same layout
  float* d_query;      // the same layout
  size_t row_stride;
  int rows;
  int heads;
  const float* keys;  // position j at keys + j · stride
  size_t stride;
  const float* keys_t;    // transpose_keys' layout
  const float* values_t;  // the same for the values
  float* d_keys;
  float* d_values;
  int first_visible;  // row r sees first_visible + r positions
  int head_dim;
  float scale;
  float* scratch;  // attention_backward_scratch(first_visible + rows − 1, head_dim) values
};

inline size_t attention_backward_scratch(int visible, int head_dim) {
  // P and dS for the block's rows over the visible keys rounded up to 16; queries, dO, scaled queries.
  const size_t keys = (static_cast<size_t>(visible) + 15) / 16 * 16;
  return kAttentionBackwardRows * (2 * keys + 3 * static_cast<size_t>(head_dim));
}

using AttentionBackwardBlockKernel = void (*)(const AttentionBackwardBlock& block);

// The forward of a block of query rows for the query heads that share one kv head, over keys
// stored transposed in blocks of 16 (prefill and scoring; see transpose_keys), so 16 scores come
// from vertical fused multiply-adds; the weighted sum of the values runs over spans of keys for every query of the
// block in turn, so a span's values are read from L1 by all of them. Each output is the same f32
// operations in the same order as the single-head kernel's (per-lane chains over the head's
// 16-float chunks and the fixed tree of 15 adds across lanes for a score; the same softmax; the
// same chains over positions for the weighted sum): decode (one row, the single-head kernel) and
// prefill agree bit for bit.
struct AttentionRowsTransposed {
  const float* query;  // row r's head g at query + r · row_stride + g · head_dim
  float* out;          // the same layout
  size_t row_stride;
  int rows;
  int heads;
  const float* keys_t;
  size_t keys_t_stride;  // keys_t's positions: the keys rounded up to a multiple of 16
  const float* values;   // position j's value at values + j * stride
  size_t stride;
  int first_visible;  // row r sees first_visible + r positions
  int head_dim;
  float scale;
  float* scratch;  // attention_rows_scratch(rows · heads, keys_t_stride, head_dim) values
};

inline size_t attention_rows_scratch(int queries, size_t keys_t_stride, int head_dim) {
  // Scores, scaled queries, the weighted sums' 8 running vectors, the softmax normalizers.
  return static_cast<size_t>(queries) * (keys_t_stride + head_dim + 8 * 16 + 1);
}

using AttentionTransposedKernel = void (*)(const AttentionRowsTransposed& rows);

// Keys in blocks of 16 positions, each block dimension-major: key j's dimension d (at
// keys[j · stride + d]) goes to keys_t[(j / 16) · 16 · head_dim + d · 16 + j % 16], and the last
// block is padded with zeros, so the 16 keys' values of one dimension are one aligned row.
void transpose_keys(float* keys_t, const float* keys, size_t stride, int count, int head_dim);

void attention_backward_generic(const VectorOps& ops, const AttentionBackwardHead& head);

#if defined(__x86_64__)
// AVX2 kernels for head_dim 32, 64 and 128, else null.
AttentionHeadKernel attention_head_avx2(int head_dim);
AttentionBackwardKernel attention_backward_avx2(int head_dim);
// AVX-512 kernels for the same head sizes, else null (the backward takes blocks of rows and a kv head's query heads at once).
AttentionHeadKernel attention_head_avx512(int head_dim);
AttentionBackwardBlockKernel attention_backward_block_avx512(int head_dim);
AttentionTransposedKernel attention_transposed_avx512(int head_dim);
#endif

}  // namespace flywheel
