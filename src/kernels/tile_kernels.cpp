// The fast kernels' three builds: tile_kernels.inc compiled for AVX-512, for AVX2 with FMA, and for the
// compiler's baseline, each in a namespace of its own, as kernels/isa_builds.hpp does it (and kernels.cpp
// for the softmax rows); fast.cpp picks one with kernels_for, by fast_vector_isa. The tests run every
// build the machine can.
#include "kernels/tile_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/nn.hpp"
#include "kernels/isa_builds.hpp"

namespace attn::tiles {

FusedScratch fused_scratch(std::size_t head_dim) {
  const std::size_t acc_ld = packed_row(head_dim);
  return {acc_ld,
          std::vector<float>(head_dim * kFusedLd),
          std::vector<float>(kFusedTileK * kFusedLd),
          std::vector<float>(kFusedTileQ * acc_ld),
          std::vector<float>(kFusedTileQ),
          std::vector<float>(kFusedTileQ),
          std::vector<float>(kFusedTileQ)};
}

// The 8-lane sums both vector builds end with (AVX-512 folds its halves first).
ATTN_TARGET_AVX2
namespace lanes8 {
static inline float hsum(__m256 v) {
  const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pairs = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)));
}
// The four sums of a, b, c and d into out[0..3]: three horizontal adds and the two halves.
static inline void hsum4(__m256 a, __m256 b, __m256 c, __m256 d, float* out) {
  const __m256 z = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
  _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(z), _mm256_extractf128_ps(z, 1)));
}
}  // namespace lanes8
ATTN_TARGET_END

ATTN_TARGET_AVX512
namespace avx512 {
using namespace isa::avx512;
constexpr std::size_t kMR = 8, kNV = 2;  // 16 of the 32 zmm registers accumulate, 8 rows by 32 columns
// A vector's two halves added: 8 lanes, for the 8-lane reductions.
static inline __m256 fold_halves(vexp_t v) {
  // Halves through the vector extension (GCC 12's extract intrinsics warn of an undefined temporary).
  typedef float half_t __attribute__((vector_size(32)));
  half_t lo, hi;
  __builtin_memcpy(&lo, &v, sizeof lo);
  __builtin_memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  return static_cast<__m256>(lo + hi);
}
static inline float hsum(vexp_t v) { return lanes8::hsum(fold_halves(v)); }
static inline void hsum4(vexp_t a, vexp_t b, vexp_t c, vexp_t d, float* out) {
  lanes8::hsum4(fold_halves(a), fold_halves(b), fold_halves(c), fold_halves(d), out);
}
#include "kernels/tile_kernels.inc"
}  // namespace avx512
ATTN_TARGET_END

ATTN_TARGET_AVX2
namespace avx2 {
using namespace isa::avx2;
constexpr std::size_t kMR = 6, kNV = 2;  // 12 of the 16 ymm registers accumulate, 6 rows by 16 columns
static inline float hsum(vexp_t v) { return lanes8::hsum(v); }
static inline void hsum4(vexp_t a, vexp_t b, vexp_t c, vexp_t d, float* out) { lanes8::hsum4(a, b, c, d, out); }
#include "kernels/tile_kernels.inc"
}  // namespace avx2
ATTN_TARGET_END

namespace portable {
using namespace isa::portable;
constexpr std::size_t kMR = 4, kNV = 2;
static inline float hsum(vexp_t v) { return (v[0] + v[1]) + (v[2] + v[3]); }
static inline void hsum4(vexp_t a, vexp_t b, vexp_t c, vexp_t d, float* out) {
  out[0] = hsum(a);
  out[1] = hsum(b);
  out[2] = hsum(c);
  out[3] = hsum(d);
}
#include "kernels/tile_kernels.inc"
}  // namespace portable

const IsaKernels& kernels_for(VectorIsa isa) {
  return for_isa(isa, avx512::kKernels, avx2::kKernels, portable::kKernels);
}

}  // namespace attn::tiles
