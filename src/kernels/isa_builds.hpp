#pragma once
// How a kernel body is compiled once per instruction set, for the .cpp files that do it (kernels.cpp's
// softmax rows, tile_kernels.cpp's tiles):
//
//   ATTN_TARGET_AVX512
//   namespace avx512 {
//   using namespace isa::avx512;  // kLanes, vexp, splat of that build
//   #include "kernels/<body>.inc"  // defines the build's table of functions
//   }  // namespace avx512
//   ATTN_TARGET_END
//
// and the same for avx2 (and portable, if the body has a portable vector build); the .cpp then picks a
// table with for_isa (kernels/vector_isa.hpp). Every function defined between a BEGIN and its END is
// compiled for that target, so no function of one build can stand in for another's, and nothing outside
// those namespaces is built for a wider target than the rest of the program. The compiler flags stay each
// .cpp's own (kernels.cpp: -ffp-contract=off, bit for bit; tile_kernels.cpp: fast). Internal to src/kernels.
#include <cstddef>

#include <immintrin.h>
#include <sleef.h>

#include "core/nn.hpp"

// SLEEF's AVX2 and AVX-512 exp for code compiled without those instruction sets: libsleef exports them on
// every x86-64 build, but sleef.h declares them only when the including code is compiled for them (ours is
// not; the functions calling them are, by the pragmas below). The declarations carry the same target so
// that clang, too, accepts the vector arguments' ABI.
#ifndef __AVX2__
extern "C" __attribute__((target("avx2,fma"))) __m256 Sleef_expf8_u10avx2(__m256);
#endif
#ifndef __AVX512F__
extern "C" __attribute__((target("avx512f"))) __m512 Sleef_expf16_u10avx512f(__m512);
#endif

// GCC's pragma, or clang's attribute push for the fuzzing build.
#if defined(__clang__)
#define ATTN_TARGET_AVX512 _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512vl,fma\"))), apply_to = function)")
#define ATTN_TARGET_AVX2 _Pragma("clang attribute push(__attribute__((target(\"avx2,fma\"))), apply_to = function)")
#define ATTN_TARGET_END _Pragma("clang attribute pop")
#else
#define ATTN_TARGET_AVX512 _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512vl,fma\")")
#define ATTN_TARGET_AVX2 _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma\")")
#define ATTN_TARGET_END _Pragma("GCC pop_options")
#endif

// What each build gives a body:
//   kLanes        floats per vector register (16, 8, 4)
//   vexp_t        the vector of kLanes floats (a GCC/clang vector extension: zmm, ymm or xmm code as the
//                 pragma's target allows)
//   vexp(vec)     exp on every lane, SLEEF's u10 build for the instruction set: torch_exp's bits
//   splat(float)  the float in every lane: the instruction set's one broadcast (vec{} + s must stay an
//                 add, as 0 + -0 is +0, and a lane-by-lane build came out as sixteen masked inserts)
namespace attn::isa {

ATTN_TARGET_AVX512
namespace avx512 {
constexpr std::size_t kLanes = 16;
typedef float vexp_t __attribute__((vector_size(64)));
static inline vexp_t vexp(vexp_t x) { return Sleef_expf16_u10avx512f(x); }
static inline vexp_t splat(float s) { return _mm512_set1_ps(s); }
}  // namespace avx512
ATTN_TARGET_END

ATTN_TARGET_AVX2
namespace avx2 {
constexpr std::size_t kLanes = 8;
typedef float vexp_t __attribute__((vector_size(32)));
static inline vexp_t vexp(vexp_t x) { return Sleef_expf8_u10avx2(x); }
static inline vexp_t splat(float s) { return _mm256_set1_ps(s); }
}  // namespace avx2
ATTN_TARGET_END

namespace portable {
constexpr std::size_t kLanes = 4;
typedef float vexp_t __attribute__((vector_size(16)));
// Lane by lane with the scalar build of the same SLEEF function: no instruction set assumed.
static inline vexp_t vexp(vexp_t x) {
  for (std::size_t l = 0; l < kLanes; ++l) x[l] = torch_exp(x[l]);
  return x;
}
static inline vexp_t splat(float s) { return vexp_t{s, s, s, s}; }
}  // namespace portable

}  // namespace attn::isa
