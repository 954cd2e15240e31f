// Shared by the SIMD translation units: the target attributes of functions using AVX2/FMA/F16C or
// AVX-512 intrinsics. Only code reached after detect_simd() said yes may call such a function.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FLYWHEEL_HAVE_X86 1
#include <immintrin.h>
#define FLYWHEEL_AVX2 __attribute__((target("avx2,fma,f16c")))
#define FLYWHEEL_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))
#else
#define FLYWHEEL_HAVE_X86 0
#endif
