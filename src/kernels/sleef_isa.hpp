#pragma once
// SLEEF's AVX2 and AVX-512 exp for code compiled without those instruction sets: libsleef exports them on
// every x86-64 build, but sleef.h declares them only when the including code is compiled for them (ours is
// not; the functions calling them are, by target attribute or pragma). The declarations carry the same
// target so that clang, too, accepts the vector arguments' ABI. Internal to src/core.
#include <immintrin.h>
#include <sleef.h>

#ifndef __AVX2__
extern "C" __attribute__((target("avx2,fma"))) __m256 Sleef_expf8_u10avx2(__m256);
#endif
#ifndef __AVX512F__
extern "C" __attribute__((target("avx512f"))) __m512 Sleef_expf16_u10avx512f(__m512);
#endif
