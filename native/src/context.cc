#include "context.h"

#include "attention.h"

#include <algorithm>
#include <cmath>

namespace flywheel {

namespace {

// AVX-512 machines run the AVX2 vector primitives and attention: those are bound by memory and
// reductions, not by arithmetic width; only the matmul tiles have 512-bit versions.
const VectorOps& ops_for(SimdLevel level) {
#if defined(__x86_64__)
  if (level != SimdLevel::Scalar) return vector_ops_avx2();
#endif
  return vector_ops_scalar();
}

const MatmulKernels& matmul_kernels_for(SimdLevel level) {
#if defined(__x86_64__)
  if (level == SimdLevel::Avx512) return matmul_kernels_avx512();
  if (level == SimdLevel::Avx2) return matmul_kernels_avx2();
#endif
  return matmul_kernels_scalar();
}

// Below this many values an elementwise kernel runs on the calling thread alone: waking the pool
// costs more than it saves.
constexpr size_t kParallelElements = 1 << 15;

}  // namespace

KernelContext::KernelContext(int threads, SimdLevel level)
    : level_(level), ops_(ops_for(level)), matmul_kernels_(matmul_kernels_for(level)), pool_(threads), scratch_(pool_.size()) {}

void KernelContext::matmul(float* out, const float* x, int rows, const PackedMatrix& w, const float* bias) {
  flywheel::matmul(pool_, scratch_, matmul_kernels_, out, x, rows, w, bias);
}

void KernelContext::embed(float* out, const PackedMatrix& table, const int32_t* ids, int count) {
  pool_.parallel_for(count, [&](int row, int) { table.read_row(ids[row], out + static_cast<size_t>(row) * table.cols()); });
}

void KernelContext::rms_norm(float* out, const float* x, const float* weight, int rows, int dim, float eps) {
  for_chunks(rows, std::max<size_t>(1, kParallelElements / dim), [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; row++) {
      const float* in = x + row * dim;
      const double mean = ops_.sum_squares(in, dim) / dim;
      const float inverse = static_cast<float>(1.0 / std::sqrt(mean + eps));
      ops_.scale_mul(out + row * dim, in, inverse, weight, dim);
    }
  });
}

void KernelContext::rope(float* x, int rows, int heads, int head_dim, const int32_t* positions, const float* cos,
                         const float* sin) {
  rotate(x, rows, heads, head_dim, positions, cos, sin, false);
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

void KernelContext::attention(float* out, const float* q, int rows, const float* keys, const float* values, int start,
                              const AttentionShape& shape) {
  const int group = shape.heads / shape.kv_heads;
  const size_t kv_stride = static_cast<size_t>(shape.kv_heads) * shape.head_dim;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
  AttentionHeadKernel kernel = nullptr;
#if defined(__x86_64__)
  if (level_ != SimdLevel::Scalar) kernel = attention_head_avx2(shape.head_dim);
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

void KernelContext::silu_mul(float* out, const float* gate, const float* up, size_t length) {
  for_chunks(length, kParallelElements, [&](size_t begin, size_t end) { ops_.silu_mul(out + begin, gate + begin, up + begin, end - begin); });
}

void KernelContext::add(float* x, const float* y, size_t length) {
  for_chunks(length, kParallelElements, [&](size_t begin, size_t end) { ops_.add(x + begin, y + begin, end - begin); });
}

}  // namespace flywheel
