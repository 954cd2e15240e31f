// One native kernel backend instance: its thread pool, per-thread scratch and the SIMD tables it
// dispatches to. Every method works on raw, already validated buffers (see addon.cc) and blocks
// until done. An instance is used by one JavaScript thread at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attention.h"
#include "training_args.h"
#include "cpu.h"
#include "matmul.h"
#include "matmul_bf16.h"
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
  // matmul_depth: the matmul's block of columns (kMatmulDepth; tests set others to compare bits).
  KernelContext(int threads, SimdLevel level, int matmul_depth = kMatmulDepth);

  int threads() const { return pool_.size(); }
  SimdLevel simd() const { return level_; }

  // One group per operation, its forward beside its backward, each defined in ops/<operation>.cc.
  // The semantics of every kernel are those of `Kernels` in src/engine/kernels/types.ts.

  // ops/linear.cc. dW[o, i] += Σ_r dy[r, o]·x[r, i]; dBias[o] += Σ_r dy[r, o] when d_bias is not null.
  // A paired w (the bf16 forward's W or the bf16 backward's Wᵀ) and `bf16` take the bf16 products
  // (matmul_bf16.h), which need bf16_products().
  void matmul(float* out, const float* x, int rows, const PackedMatrix& w, const float* bias, bool accumulate = false);
  void linear_weight_backward(float* d_weight, float* d_bias, const float* dy, const float* x, int rows, int out_dim, int in_dim,
                              bool bf16 = false);
  bool bf16_products() const { return bf16_kernels() != nullptr && level_ == SimdLevel::Avx512; }
  // Training's weight update: W from its f32 values (row-major), or with `transposed` an f32 Wᵀ from
  // W's values, panels shared out over the pool.
  void write_matrix(PackedMatrix& w, const float* values, bool transposed);

  // ops/gemm.cc. c (+)= alpha · op(a)·op(b). Every output is one f32 chain over k in order, whatever
  // m and the thread count, so a row gives the same result alone or in a batch (LoRA runs in the
  // sampler too).
  void gemm(float* c, const float* a, const float* b, const GemmSpec& spec);

  // ops/embedding.cc
  void embed(float* out, const PackedMatrix& table, const int32_t* ids, int count);
  void embed_backward(float* d_table, const float* d_out, const int32_t* ids, int count, int dim);

  // ops/rms_norm.cc
  void rms_norm(float* out, const float* x, const float* weight, int rows, int dim, float eps);
  void rms_norm_backward(float* dx, const float* dy, const float* x, const float* weight, int rows, int dim, float eps,
                         bool accumulate, float* d_weight);

  // ops/rope.cc
  void rope(float* x, int rows, int heads, int head_dim, const int32_t* positions, const float* cos, const float* sin);
  void rope_backward(float* dx, int rows, int heads, int head_dim, const int32_t* positions, const float* cos, const float* sin);

  // ops/attention.cc. `keys`/`values` hold at least start + rows positions of kv_heads × head_dim
  // values; the backward writes dq and adds into d_keys/d_values.
  void attention(float* out, const float* q, int rows, const float* keys, const float* values, int start,
                 const AttentionShape& shape);
  void attention_backward(float* dq, float* d_keys, float* d_values, const float* d_out, const float* q, const float* keys,
                          const float* values, int rows, int start, const AttentionShape& shape);

  // ops/silu_mul.cc (with the residual add)
  void silu_mul(float* out, const float* gate, const float* up, size_t length);
  void silu_mul_backward(float* d_gate, float* d_up, const float* d_out, const float* gate, const float* up, size_t length);
  void add(float* x, const float* y, size_t length);

  // ops/token_logprobs.cc. Log-softmax over a vocabulary: per row of logits, the max, Σ exp(x − max)
  // and Σ exp(x − max)·x; the caller takes the one logarithm per row. The backward turns each row
  // into g·(onehot(target) − exp(x − normalizer)) in place.
  void token_logprob_sums(const float* logits, int rows, int vocab, const double* fraction_powers, double* maxes, double* sums,
                          double* weighted);
  void token_logprobs_backward(float* logits, int rows, int vocab, const int32_t* targets, const double* normalizers,
                               const double* gradients, const double* fraction_powers);

  // ops/optimizer.cc. adamw_step returns how many updated weights are not finite.
  size_t adamw_step(float* params, const float* grads, float* exp_avg, float* exp_avg_sq, size_t length, const AdamWScalars& scalars);
  double sum_of_squares(const float* x, size_t length);
  void scale(float* x, size_t length, double factor);

 private:
  // Below this many values an elementwise kernel runs on the calling thread alone: waking the pool
  // costs more than it saves.
  static constexpr size_t kParallelElements = 1 << 15;
  // Below this many multiply-adds a product runs on the calling thread alone.
  static constexpr double kSerialWork = 1 << 16;

  // attention() from this many query rows on, where the SIMD level has a kernel over transposed keys:
  // the transpose (width · kv_heads · head_dim copies) is then small beside the scores.
  static constexpr int kTransposedRows = 8;
  void attention_transposed(AttentionTransposedKernel kernel, float* out, const float* q, int rows, const float* keys,
                            const float* values, int start, const AttentionShape& shape);

  // gemm's parts: one row of c from its sums (times alpha, added when accumulating); every row
  // from sums laid out transposed; and the transposed-a products with a side of LoRA's rank, from
  // one pass over the long side at AVX-512.
  void store_row(float* c, int i, const float* sums, const GemmSpec& spec);
  void store_transposed(float* c, const float* c_t, const GemmSpec& spec);
  void transposed_a_products(float* c, const float* a, const float* b, const GemmSpec& spec, bool small_n);

  // linear_weight_backward's parts: dW in f32 or bf16 products, then the bias's sums.
  void linear_weight_backward_f32(float* d_weight, const float* dy, const float* x, int rows, int out_dim, int in_dim);
  void linear_weight_backward_bf16(float* d_weight, const float* dy, const float* x, int rows, int out_dim, int in_dim);
  void add_bias_gradient(float* d_bias, const float* dy, int rows, int out_dim);

  // RoPE's rotation of every head vector in place, or its inverse (the backward).
  void rotate(float* x, int rows, int heads, int head_dim, const int32_t* positions, const float* cos, const float* sin, bool inverse);

  // Eight independent double sums (kept apart so their adds overlap instead of each waiting on the
  // last), added in one fixed tree, so the total depends on the input alone.
  static double sum_lanes(const double (&lanes)[8]) {
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  }

  // Splits [0, length) into chunks worth a task each when it is big enough to share out.
  template <typename Fn>
  void for_chunks(size_t length, size_t min_chunk, const Fn& fn) {
    const size_t chunks = std::min<size_t>(static_cast<size_t>(pool_.size()) * 4, std::max<size_t>(1, length / min_chunk));
    const size_t size = (length + chunks - 1) / chunks;
    pool_.parallel_for(static_cast<int>(chunks), [&](int chunk, int) {
      const size_t begin = chunk * size;
      const size_t end = std::min(length, begin + size);
      if (begin < end) fn(begin, end);
    });
  }

  SimdLevel level_;
  const VectorOps& ops_;
  const MatmulKernels& matmul_kernels_;
  int matmul_depth_;
  ThreadPool pool_;
  Scratch scratch_;
  // Buffers of the training kernels, kept between calls (they only grow): gemm's copy of b in the
  // layout its loops read and its transposed output, linear_weight_backward's bias sums,
  // attention_backward's per-task key and value gradients, attention's transposed keys,
  // rms_norm_backward's per-block weight gradients.
  std::vector<float> gemm_b_;
  std::vector<float> gemm_c_t_;
  std::vector<double> bias_sums_;
  std::vector<float> attention_d_keys_;
  std::vector<float> attention_d_values_;
  std::vector<float> norm_weight_sums_;
  // attention's keys transposed per kv head (prefill and scoring on AVX-512).
  std::vector<float> attention_keys_t_;
  // The bf16 products' rounded operands: a paired matmul's x; the weight gradient's x and dy pairs.
  std::vector<uint16_t> bf16_rows_;
  std::vector<uint32_t> bf16_x_pairs_;
  std::vector<uint32_t> bf16_dy_pairs_;
};

}  // namespace flywheel
