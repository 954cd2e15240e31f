#include "attention.h"

#include <algorithm>

namespace flywheel {

void attention_head_generic(const VectorOps& ops, const AttentionHead& head) {
  for (int j = 0; j < head.visible; j++) head.scores[j] = ops.dot(head.query, head.keys + j * head.stride, head.head_dim) * head.scale;
  const float max = ops.max(head.scores, head.visible);
  const float inverse_sum = 1.0f / ops.exp_shifted(head.scores, head.visible, max);
  std::fill(head.out, head.out + head.head_dim, 0.0f);
  for (int j = 0; j < head.visible; j++) ops.axpy(head.out, head.scores[j] * inverse_sum, head.values + j * head.stride, head.head_dim);
}

void transpose_keys(float* keys_t, size_t keys_t_stride, const float* keys, size_t stride, int count, int head_dim) {
  // 16 keys at a time, so each written row of keys_t is a contiguous run.
  for (int j0 = 0; j0 < count; j0 += 16) {
    const int end = std::min(count, j0 + 16);
    for (int d = 0; d < head_dim; d++) {
      float* to = keys_t + static_cast<size_t>(d) * keys_t_stride;
      for (int j = j0; j < end; j++) to[j] = keys[static_cast<size_t>(j) * stride + d];
    }
  }
  for (int d = 0; d < head_dim; d++) {
    float* to = keys_t + static_cast<size_t>(d) * keys_t_stride;
    std::fill(to + count, to + keys_t_stride, 0.0f);
  }
}

void attention_backward_generic(const VectorOps& ops, const AttentionBackwardHead& head) {
  const int n = head.visible;
  const int hd = head.head_dim;
  float* p = head.scratch;
  float* dp = head.scratch + n;
  for (int j = 0; j < n; j++) p[j] = ops.dot(head.query, head.keys + j * head.stride, hd) * head.scale;
  const float max = ops.max(p, n);
  const float inverse_sum = 1.0f / ops.exp_shifted(p, n, max);
  double mean = 0;
  for (int j = 0; j < n; j++) {
    p[j] *= inverse_sum;
    dp[j] = ops.dot(head.d_out, head.values + j * head.stride, hd);
    mean += static_cast<double>(p[j]) * dp[j];
  }
  std::fill(head.d_query, head.d_query + hd, 0.0f);
  for (int j = 0; j < n; j++) {
    const float ds = p[j] * (dp[j] - static_cast<float>(mean)) * head.scale;
    ops.axpy(head.d_query, ds, head.keys + j * head.stride, hd);
    ops.axpy(head.d_keys + static_cast<size_t>(j) * hd, ds, head.query, hd);
    ops.axpy(head.d_values + static_cast<size_t>(j) * hd, p[j], head.d_out, hd);
  }
}

}  // namespace flywheel
