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

}  // namespace flywheel
