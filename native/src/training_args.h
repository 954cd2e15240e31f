// Argument bundles of KernelContext's training kernels: the LoRA products and AdamW's scalars.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flywheel {

struct GemmSpec {
  int m;
  int n;
  int k;
  bool transpose_a;  // a stored [k × m]
  bool transpose_b;  // b stored [n × k]
  float alpha;
  bool accumulate;
};

// One AdamW step's scalars, computed once in JavaScript (as the TypeScript reference does).
struct AdamWScalars {
  double beta1;
  double beta2;
  double eps;
  double step_size;             // lr / (1 − beta1^step)
  double bias_correction2_sqrt; // √(1 − beta2^step)
  double decay;                 // 1 − lr · weight_decay
};

}  // namespace flywheel
