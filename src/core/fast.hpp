#pragma once
// The fast implementations: the fused causal kernel, decoding against a KV cache, oneDNN's projections and
// the FMA calibration. Defined in core/fast.cpp and core/tile_kernels.cpp, the library attn_fast, which
// attn-bench and the tests link and attn does not (core/fast.cpp says why). Each is checked against its
// simple reference in core/kernels.hpp by tests/test_kernels.cpp.
#include <cstddef>

#include "core/kernels.hpp"

namespace attn {

// The fused kernel: tiles of queries against tiles of keys with an online (streaming) softmax, so no
// (T, T) matrix is ever held; tiles above the diagonal are skipped (a non-finite value in one of them,
// which PyTorch's product turns into NaN through its zero weight, is found beforehand); (batch, head,
// query tile) tasks are spread over `threads` threads. The tile products are our own register-blocked
// micro-kernels (tile_kernels.inc), in the build for the CPU's feature flags: AVX-512, AVX2 or portable.
void causal_attention_fused(const AttentionShape& s, const AttentionIO& io, unsigned threads);

// The fused kernel on a chosen build (for the tests, which check every build the machine can run against
// the reference); causal_attention_fused uses best_vector_isa().
void causal_attention_fused_with(VectorIsa isa, const AttentionShape& s, const AttentionIO& io, unsigned threads);

// decode_attention_reference's fast version: the cache split into runs of whole rows (tokens), spread over
// `threads` threads; each
// run reads its keys and values once, for every query head that uses them, and the runs' softmaxes are
// merged at the end (as flash-decoding does).
void decode_attention(const DecodeShape& s, const DecodeIO& io, unsigned threads);
void decode_attention_with(VectorIsa isa, const DecodeShape& s, const DecodeIO& io, unsigned threads);

// The builds' register blocks and the peak-FMA calibration: GFLOP/s of `threads` threads each running the
// build's independent FMA chains for about `seconds`.
struct IsaInfo {
  const char* name;  // "avx512", "avx2", "portable"
  std::size_t mr, nr;
};
IsaInfo isa_info(VectorIsa isa);
double fma_peak_gflops(VectorIsa isa, unsigned threads, double seconds);

// out (rows, n) = x (rows, k) @ w.T + bias, w row-major (n, k), bias (n,) or null: nn.Linear for the fast
// implementations, through oneDNN's SGEMM, which picks its kernels (AVX-512, AVX2, ...) by the CPU's
// feature flags and runs on OpenMP's threads. Not bit-exact with PyTorch; the lessons keep OpenBLAS.
void fast_linear(const float* x, std::size_t rows, std::size_t k, const float* w, std::size_t n, const float* bias,
                 float* out);

}  // namespace attn
