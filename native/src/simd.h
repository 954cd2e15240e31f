// Shared by the AVX2 translation units: the target attribute every function using AVX2/FMA/F16C
// intrinsics carries. Only code reached after detect_simd() said yes may call such a function.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FLYWHEEL_HAVE_X86 1
#include <immintrin.h>
#define FLYWHEEL_AVX2 __attribute__((target("avx2,fma,f16c")))
#else
#define FLYWHEEL_HAVE_X86 0
#endif
