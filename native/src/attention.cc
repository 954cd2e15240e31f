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

void transpose_keys(float* keys_t, const float* keys, size_t stride, int count, int head_dim) {
  const int blocks = (count + 15) / 16;
  for (int block = 0; block < blocks; block++) {
    float* to = keys_t + static_cast<size_t>(block) * 16 * head_dim;
    const int first = 16 * block;
    const int end = std::min(count - first, 16);
    for (int d = 0; d < head_dim; d++) {
      for (int p = 0; p < end; p++) to[d * 16 + p] = keys[static_cast<size_t>(first + p) * stride + d];
      for (int p = end; p < 16; p++) to[d * 16 + p] = 0.0f;
    }
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
