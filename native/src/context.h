// One native kernel backend instance: its thread pool, per-thread scratch and the SIMD tables it
// dispatches to. Every method works on raw, already validated buffers (see addon.cc) and blocks
// until done. An instance is used by one JavaScript thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu.h"
#include "matmul.h"
#include "packed_matrix.h"
#include "scratch.h"
#include "thread_pool.h"
#include "vector_ops.h"

namespace flywheel {

struct AttentionShape {
  int heads;
  int kv_heads;
  int head_dim;
};

class KernelContext {
 public:
  KernelContext(int threads, SimdLevel level);

  int threads() const { return pool_.size(); }
  SimdLevel simd() const { return level_; }

  void matmul(float* out, const float* x, int rows, const PackedMatrix& w, const float* bias);
  void embed(float* out, const PackedMatrix& table, const int32_t* ids, int count);
  void rms_norm(float* out, const float* x, const float* weight, int rows, int dim, float eps);
  void rope(float* x, int rows, int heads, int head_dim, const int32_t* positions, const float* cos, const float* sin);
  // `keys`/`values` hold at least start + rows positions of kv_heads × head_dim values.
  void attention(float* out, const float* q, int rows, const float* keys, const float* values, int start,
                 const AttentionShape& shape);
  void silu_mul(float* out, const float* gate, const float* up, size_t length);
  void add(float* x, const float* y, size_t length);

 private:
  // Splits [0, length) into chunks worth a task each when it is big enough to share out.
  template <typename Fn>
  void for_chunks(size_t length, size_t min_chunk, const Fn& fn);

  SimdLevel level_;
  const VectorOps& ops_;
  const MatmulKernels& matmul_kernels_;
  ThreadPool pool_;
  Scratch scratch_;
};

}  // namespace flywheel
