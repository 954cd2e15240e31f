// Shared by the SIMD translation units: the target attributes of functions using AVX2/FMA/F16C or
// AVX-512 intrinsics. Only code reached after detect_simd() said yes may call such a function.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FLYWHEEL_HAVE_X86 1
#include <immintrin.h>
#define FLYWHEEL_AVX2 __attribute__((target("avx2,fma,f16c")))
#define FLYWHEEL_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))
// AVX-512 with the bf16 dot products (vdpbf16ps) and conversions: Zen 4, Sapphire Rapids and later.
#define FLYWHEEL_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c")))
// The lanes of a 16-wide step with `left` values still to go: all of them, the first `left`, or none.
inline __mmask16 lanes_left(int left) { return left >= 16 ? 0xFFFF : left <= 0 ? 0 : static_cast<__mmask16>((1u << left) - 1); }
#else
#define FLYWHEEL_HAVE_X86 0
#endif
