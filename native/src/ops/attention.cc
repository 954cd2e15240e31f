// Causal grouped-query attention and its backward, over a KV cache or a packed span; the per-head
// loops are in ../attention.cc (portable), ../attention_avx2.cc and ../attention_avx512.cc.
#include <algorithm>
#include <cmath>
#include <vector>
#include "../attention.h"

#include "../context.h"

namespace flywheel {

void KernelContext::attention(float* out, const float* q, int rows, const float* keys, const float* values, int start,
                              const AttentionShape& shape) {
  const int group = shape.heads / shape.kv_heads;
  const size_t kv_stride = static_cast<size_t>(shape.kv_heads) * shape.head_dim;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
  AttentionHeadKernel kernel = nullptr;
#if defined(__x86_64__)
  if (level_ == SimdLevel::Avx512 && rows >= kTransposedRows) {
    AttentionTransposedKernel transposed = attention_transposed_avx512(shape.head_dim);
    if (transposed != nullptr) {
      attention_transposed(transposed, out, q, rows, keys, values, start, shape);
      return;
    }
  }
  if (level_ == SimdLevel::Avx512) kernel = attention_head_avx512(shape.head_dim);
  if (level_ == SimdLevel::Avx2) kernel = attention_head_avx2(shape.head_dim);
#endif
  scratch_.reserve(static_cast<size_t>(start) + rows);
  // One task per (query row, kv head): the group's query heads reuse that head's keys and values
  // while they are in cache.
  auto run = [&](int task, int thread) {
    const int row = task / shape.kv_heads;
    const int kv_head = task % shape.kv_heads;
    AttentionHead head;
    head.keys = keys + static_cast<size_t>(kv_head) * shape.head_dim;
    head.values = values + static_cast<size_t>(kv_head) * shape.head_dim;
    head.stride = kv_stride;
    head.visible = start + row + 1;
    head.head_dim = shape.head_dim;
    head.scale = scale;
    head.scores = scratch_.get(thread);
    for (int h = kv_head * group; h < (kv_head + 1) * group; h++) {
      const size_t offset = (static_cast<size_t>(row) * shape.heads + h) * shape.head_dim;
      head.query = q + offset;
      head.out = out + offset;
      if (kernel != nullptr) {
        kernel(head);
      } else {
        attention_head_generic(ops_, head);
      }
    }
  };
  const int tasks = rows * shape.kv_heads;
  // Short decode steps are cheaper on the calling thread than handed out.
  const double work = static_cast<double>(rows) * (start + rows) * shape.heads * shape.head_dim;
  if (work < kParallelElements * 8) {
    for (int task = 0; task < tasks; task++) run(task, 0);
  } else {
    pool_.parallel_for(tasks, run);
  }
}

void KernelContext::attention_transposed(AttentionTransposedKernel kernel, float* out, const float* q, int rows, const float* keys,
                                         const float* values, int start, const AttentionShape& shape) {
  const int hd = shape.head_dim;
  const int group = shape.heads / shape.kv_heads;
  const size_t kv_stride = static_cast<size_t>(shape.kv_heads) * hd;
  const int width = start + rows;
  const size_t ld = (static_cast<size_t>(width) + 15) / 16 * 16;
  const size_t per_head = ld * hd;
  if (attention_keys_t_.size() < per_head * shape.kv_heads) attention_keys_t_.resize(per_head * shape.kv_heads);
  float* keys_t = attention_keys_t_.data();
  pool_.parallel_for(shape.kv_heads, [&](int kv_head, int) {
    transpose_keys(keys_t + kv_head * per_head, keys + static_cast<size_t>(kv_head) * hd, kv_stride, width, hd);
  });
  // Tasks: (kv head, block of rows), about 32 queries a block, so the keys and values of a span
  // are read from L1 by all of them. Each output's arithmetic is the same whatever the blocks.
  const int block_rows = std::max(1, 32 / group);
  const int blocks = (rows + block_rows - 1) / block_rows;
  scratch_.reserve(attention_rows_scratch(block_rows * group, ld, hd));
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  const size_t row_stride = static_cast<size_t>(shape.heads) * hd;
  // Later blocks see more keys: handed out from the last, so the longest go first.
  pool_.parallel_for(blocks * shape.kv_heads, [&](int task, int thread) {
    const int block = blocks - 1 - task / shape.kv_heads;
    const int kv_head = task % shape.kv_heads;
    const int first = block * block_rows;
    const size_t offset = first * row_stride + static_cast<size_t>(kv_head) * group * hd;
    kernel({q + offset, out + offset, row_stride, std::min(block_rows, rows - first), group, keys_t + kv_head * per_head, ld,
            values + static_cast<size_t>(kv_head) * hd, kv_stride, start + first + 1, hd, scale, scratch_.get(thread)});
  });
}

void KernelContext::attention_backward(float* dq, float* d_keys, float* d_values, const float* d_out, const float* q,
                                       const float* keys, const float* values, int rows, int start, const AttentionShape& shape) {
  const int hd = shape.head_dim;
  const int group = shape.heads / shape.kv_heads;
  const size_t kv_stride = static_cast<size_t>(shape.kv_heads) * hd;
  const size_t q_stride = static_cast<size_t>(shape.heads) * hd;
  const int width = start + rows;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  AttentionBackwardKernel kernel = nullptr;
  AttentionBackwardBlockKernel block_kernel = nullptr;
#if defined(__x86_64__)
  if (level_ == SimdLevel::Avx512) block_kernel = attention_backward_block_avx512(hd);
  if (level_ == SimdLevel::Avx2) kernel = attention_backward_avx2(hd);
#endif
  // Tasks: (kv head, chunk of rows). Query rows of several chunks read the same keys, so each task
  // sums its keys' and values' gradients privately; they are added in chunk order at the end. The
  // chunks depend on the shape only, so the result is the same whatever the thread count. Rows
  // (or blocks of rows, for the block kernel) are dealt out round-robin: later rows see more keys,
  // so this balances the chunks.
  const int units = block_kernel != nullptr ? (rows + kAttentionBackwardRows - 1) / kAttentionBackwardRows : rows;
  const int chunks = std::max(1, std::min(units, (8 + shape.kv_heads - 1) / shape.kv_heads));
  const int tasks = shape.kv_heads * chunks;
  const size_t private_size = static_cast<size_t>(width) * hd;
  std::vector<float>& private_keys = attention_d_keys_;
  std::vector<float>& private_values = attention_d_values_;
  // Each task zeroes its own sums, on its thread.
  if (private_keys.size() < private_size * tasks) {
    private_keys.resize(private_size * tasks);
    private_values.resize(private_size * tasks);
  }

  // The block kernel reads the keys and values transposed, one copy per kv head.
  const size_t per_head = (static_cast<size_t>(width) + 15) / 16 * 16 * hd;
  if (block_kernel != nullptr) {
    if (attention_keys_t_.size() < 2 * per_head * shape.kv_heads) attention_keys_t_.resize(2 * per_head * shape.kv_heads);
    float* transposed = attention_keys_t_.data();
    pool_.parallel_for(2 * shape.kv_heads, [&](int task, int) {
      const float* from = (task % 2 == 0 ? keys : values) + static_cast<size_t>(task / 2) * hd;
      transpose_keys(transposed + task * per_head, from, kv_stride, width, hd);
    });
    scratch_.reserve(attention_backward_scratch(width, hd));
  } else {
    scratch_.reserve(2 * static_cast<size_t>(width));
  }

  auto run = [&](int task, int thread) {
    const int kv_head = task / chunks;
    const int chunk = task % chunks;
    float* task_d_keys = private_keys.data() + task * private_size;
    float* task_d_values = private_values.data() + task * private_size;
    std::fill(task_d_keys, task_d_keys + private_size, 0.0f);
    std::fill(task_d_values, task_d_values + private_size, 0.0f);
    const float* head_keys = keys + static_cast<size_t>(kv_head) * hd;
    const float* head_values = values + static_cast<size_t>(kv_head) * hd;
    if (block_kernel != nullptr) {
      const float* transposed = attention_keys_t_.data() + (2 * kv_head) * per_head;
      for (int unit = chunk; unit < units; unit += chunks) {
        const int first = unit * kAttentionBackwardRows;
        const size_t offset = first * q_stride + static_cast<size_t>(kv_head * group) * hd;
        block_kernel({q + offset, d_out + offset, dq + offset, q_stride, std::min(kAttentionBackwardRows, rows - first), group, head_keys,
                      kv_stride, transposed, transposed + per_head, task_d_keys, task_d_values, start + first + 1, hd, scale,
                      scratch_.get(thread)});
      }
      return;
    }
    AttentionBackwardHead head;
    head.keys = head_keys;
    head.values = head_values;
    head.stride = kv_stride;
    head.d_keys = task_d_keys;
    head.d_values = task_d_values;
    head.head_dim = hd;
    head.scale = scale;
    head.scratch = scratch_.get(thread);
    for (int r = chunk; r < rows; r += chunks) {
      head.visible = start + r + 1;
      for (int h = kv_head * group; h < (kv_head + 1) * group; h++) {
        const size_t offset = r * q_stride + static_cast<size_t>(h) * hd;
        head.query = q + offset;
        head.d_out = d_out + offset;
        head.d_query = dq + offset;
        if (kernel != nullptr) {
          kernel(head);
        } else {
          attention_backward_generic(ops_, head);
        }
      }
    }
  };
  const double work = static_cast<double>(rows) * width * shape.heads * hd;
  if (work < kSerialWork) {
    for (int task = 0; task < tasks; task++) run(task, 0);
  } else {
    pool_.parallel_for(tasks, run);
  }
  for_chunks(width, 64, [&](size_t begin, size_t end) {
    for (int kv_head = 0; kv_head < shape.kv_heads; kv_head++) {
      for (int chunk = 0; chunk < chunks; chunk++) {
        const size_t base = static_cast<size_t>(kv_head * chunks + chunk) * private_size;
        for (size_t j = begin; j < end; j++) {
          const size_t to = j * kv_stride + static_cast<size_t>(kv_head) * hd;
          ops_.add(d_keys + to, private_keys.data() + base + j * hd, hd);
          ops_.add(d_values + to, private_values.data() + base + j * hd, hd);
        }
      }
    }
  });
}

}  // namespace flywheel
