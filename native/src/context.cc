// KernelContext: the SIMD tables it dispatches to; each operation's forward and backward live in ops/.
#include "context.h"

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

}  // namespace

KernelContext::KernelContext(int threads, SimdLevel level, int matmul_depth)
    : level_(level),
      ops_(ops_for(level)),
      matmul_kernels_(matmul_kernels_for(level)),
      matmul_depth_(matmul_depth),
      pool_(threads),
      scratch_(pool_.size()) {}

}  // namespace flywheel
