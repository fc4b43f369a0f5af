#pragma once
// The fast implementations: the fused causal kernel, decoding against a KV cache, oneDNN's projections and
// the FMA calibration. Defined in kernels/fast.cpp and kernels/tile_kernels.cpp, the library attn_fast, which
// attn-bench and the tests link and attn does not (kernels/fast.cpp says why). Each is checked against its
// simple reference in kernels/kernels.hpp by tests/test_kernels.cpp.
#include <cstddef>

#include "kernels/kernels.hpp"

namespace attn {

// The fused kernel: tiles of queries against tiles of keys with an online (streaming) softmax, so no
// (T, T) matrix is ever held; tiles above the diagonal are skipped (a non-finite value in one of them,
// which PyTorch's product turns into NaN through its zero weight, is found beforehand); (batch, head,
// query tile) tasks are spread over `threads` threads. The tile products are our own register-blocked
// micro-kernels (tile_kernels.inc), in the build for the CPU's feature flags: AVX-512, AVX2 or portable.
void causal_attention_fused(const AttentionShape& s, const AttentionIO& io, unsigned threads);

// The fused kernel on a chosen build (for the tests, which check every build the machine can run against
// the reference); causal_attention_fused uses fast_vector_isa(), the CPU's widest unless set_fast_isa chose.
void causal_attention_fused_with(VectorIsa isa, const AttentionShape& s, const AttentionIO& io, unsigned threads);

// decode_attention_reference's fast version: the cache split into runs of whole rows (tokens), spread over
// `threads` threads; each
// run reads its keys and values once, for every query head that uses them, and the runs' softmaxes are
// merged at the end (as flash-decoding does).
void decode_attention(const DecodeShape& s, const DecodeIO& io, unsigned threads);
void decode_attention_with(VectorIsa isa, const DecodeShape& s, const DecodeIO& io, unsigned threads);

// The builds' register blocks and the peak-FMA calibration: GFLOP/s of `threads` threads each running the
// build's independent FMA chains, the best of three timings, for about `seconds` in all.
struct IsaInfo {
  const char* name;  // "avx512", "avx2", "portable"
  std::size_t mr, nr;
};
IsaInfo isa_info(VectorIsa isa);
// Runs the fast implementations on `isa`'s build from now on, in this process: our kernels (fast_vector_isa)
// and oneDNN's, capped at the same instruction set (dnnl_set_max_cpu_isa), so that an AVX-512 machine
// times what an AVX2-only CPU would run. Before any oneDNN call (oneDNN fixes its cap at the first);
// returns false, changing nothing, when the CPU cannot run `isa` or oneDNN refuses the cap.
bool set_fast_isa(VectorIsa isa);
// Binds OpenMP's `threads` threads (the fast implementations' and oneDNN's; the calling thread is thread 0)
// one to each CPU the main thread may run on, in order, or (pin false) lets them run on all of those CPUs
// again. On the 2-core development machine, five alternating pairs of runs: bound, fused's runs varied by
// 2.2-4.5% of their median; unbound, by 2.5-9.3%; the medians alike (docs/performance.md, "Steady
// numbers"). Unlike OMP_PROC_BIND, which binds the main thread before OpenBLAS starts its own threads (they
// then share its core, and OpenBLAS's SGEMM ran at half its rate), this binds only when asked, after the
// libraries have started, and leaves OpenBLAS's threads where they were. Returns false, changing nothing,
// where the user placed OpenMP's threads (OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY), where there are
// fewer CPUs than threads, without OpenMP, or where the system refuses.
bool pin_fast_threads(bool pin, unsigned threads);
// Bound for the guard's lifetime: a few microseconds each way (two parallel regions and a system call per
// thread), against the milliseconds to seconds of a bench run.
struct PinnedFastThreads {
  unsigned threads;
  explicit PinnedFastThreads(unsigned n) : threads(n) { pin_fast_threads(true, threads); }
  ~PinnedFastThreads() { pin_fast_threads(false, threads); }
  PinnedFastThreads(const PinnedFastThreads&) = delete;
  PinnedFastThreads& operator=(const PinnedFastThreads&) = delete;
};

// The threads the fast implementations and oneDNN's SGEMM run on from now on, in this process: OpenMP's
// team size (omp_set_num_threads), which oneDNN reads at each call, and OpenBLAS's and attn's own
// (set_compute_threads, kernels/blas.hpp). libgomp would otherwise take OMP_NUM_THREADS or every CPU of the
// mask, and never a cgroup's quota.
void set_fast_threads(unsigned threads);

// The instruction set oneDNN's kernels use, as oneDNN names it ("avx2", "avx512_core", ...): the CPU's
// widest, or set_fast_isa's cap. Asking fixes oneDNN's cap, as any oneDNN call does.
const char* onednn_isa();
double fma_peak_gflops(VectorIsa isa, unsigned threads, double seconds);

// out (rows, n) = x (rows, k) @ w.T + bias, w row-major (n, k), bias (n,) or null: nn.Linear for the fast
// implementations, through oneDNN's SGEMM, which picks its kernels (AVX-512, AVX2, ...) by the CPU's
// feature flags and runs on OpenMP's threads. Not bit-exact with PyTorch; the lessons keep OpenBLAS.
void fast_linear(const float* x, std::size_t rows, std::size_t k, const float* w, std::size_t n, const float* bias,
                 float* out);

// Whole layers through the fused kernel, without dropout, checked against the modules' step-by-step
// passes (tests/test_kernels.cpp). x (b, n, d_in) -> (b, n, heads * head_dim).
// MultiHeadAttention (kv_heads == heads): one (3 d_out, d_in) projection for queries, keys and values
// (oneDNN), then causal_attention_fused on strided views of its output, then out_proj.
Tensor3 mha_forward_fused(const AttentionWeights& w, const Tensor3& x, unsigned threads = 2);
// GroupedQueryAttention: the three projections apart (keys and values are narrower), then the same kernel
// with kv_heads < heads, then out_proj (no bias).
Tensor3 gqa_forward_fused(const AttentionWeights& w, const Tensor3& x, unsigned threads = 2);

}  // namespace attn
