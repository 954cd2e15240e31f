// Which SIMD instruction sets this CPU offers. The addon is compiled for the baseline of its target
// (x86-64 or arm64); the AVX2 kernels are compiled with per-function target attributes and chosen
// at run time, so one build runs everywhere and uses what the machine has.
#pragma once

namespace flywheel {

enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512 = 2 };

// The best level this CPU supports (AVX2 needs FMA and F16C as well; AVX-512 means AVX-512F on top).
SimdLevel detect_simd();

const char* simd_name(SimdLevel level);

// Whether the CPU has AVX-512 with the bf16 dot products, which the bf16 products (matmul_bf16.h) need.
bool detect_bf16_products();

}  // namespace flywheel
