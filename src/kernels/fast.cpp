// The fast implementations that attn-bench times and the tests check: the fused causal kernel, decoding
// against a KV cache, the FMA calibration, oneDNN's projections and the modules' fast forwards. They live
// in their own library, attn_fast, linked by attn-bench and the tests but not by attn: oneDNN and OpenMP
// would add about 15 ms to the start of every lesson (the dynamic loader's relocations and libgomp's set-up,
// measured on an empty program), and no lesson runs these paths. Declared in kernels/fast.hpp (and the two
// forwards in modules/attention.hpp).
#include "kernels/fast.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <dnnl.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

#include "core/nn.hpp"
#include "kernels/blas.hpp"
#include "kernels/threads.hpp"
#include "kernels/tile_kernels.hpp"

namespace attn {

namespace {


// PyTorch multiplies the whole (T, T) weights by the values, so a future key's weight, 0, meets its value
// too, and 0 * inf or 0 * NaN is NaN: a non-finite value poisons that column of the context of every
// earlier query. The fused kernel never reads a future key's value if it can help it, so it is told, per
// (batch, kv head, column), the last row whose value there is not finite (-1: none). `bad_rows` (B, T)
// marks the rows the packing found not all finite (the common case is none), so only those are read again.
std::vector<std::ptrdiff_t> last_nonfinite_values(const AttentionShape& s, const AttentionIO& io,
                                                  const std::vector<unsigned char>& bad_rows) {
  const std::size_t T = s.tokens, hd = s.head_dim;
  std::vector<std::ptrdiff_t> last(s.batch * s.kv_heads * hd, -1);  // (B, kv_heads, hd)
  for (std::size_t b = 0; b < s.batch; ++b)
    for (std::size_t j = 0; j < T; ++j) {
      if (!bad_rows[b * T + j]) continue;
      const float* row = io.v + (b * T + j) * io.ldv;
      for (std::size_t c = 0; c < s.kv_heads * hd; ++c)
        if (!std::isfinite(row[c])) last[b * s.kv_heads * hd + c] = static_cast<std::ptrdiff_t>(j);
    }
  return last;
}

// Runs task(i, thread) for i in [0, tasks) on `threads` threads, handed out in order as threads come
// free. On OpenMP's threads where the build has OpenMP: the same pool oneDNN's SGEMM runs on, so the
// projections and the attention never have two pools spinning for the same cores, and a pool that stays
// up between calls (a decode step is tens of microseconds; starting threads for each would cost as much).
template <class F>
void parallel_tasks(unsigned threads, std::size_t tasks, F task) {
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::min<std::size_t>(tasks, 1u << 16))));
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::size_t i = 0; i < tasks; ++i) task(i, static_cast<unsigned>(omp_get_thread_num()));
#else
  std::atomic<std::size_t> next{0};
  on_threads(threads, [&](unsigned t) {
    for (std::size_t i = next++; i < tasks; i = next++) task(i, t);
  });
#endif
}

}  // namespace

void causal_attention_fused(const AttentionShape& s, const AttentionIO& io, unsigned threads) {
  causal_attention_fused_with(fast_vector_isa(), s, io, threads);
}

void causal_attention_fused_with(VectorIsa isa, const AttentionShape& s, const AttentionIO& io, unsigned threads) {
  const tiles::IsaKernels& kernels = tiles::kernels_for(isa);
  const std::size_t tiles_per_head = (s.tokens + tiles::kFusedTileQ - 1) / tiles::kFusedTileQ;
  const std::size_t tasks = s.batch * s.heads * tiles_per_head;
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::min<std::size_t>(tasks, 1u << 16))));
  // Each (batch, key/value head)'s keys and values packed into contiguous (T, hd) rows of `row` floats,
  // zero past hd: in place they lie a whole projection row apart, a stride at which the L1 cache keeps
  // only a few of them, and every query tile of the head would copy them again. Tasks of whole token rows
  // (every head's keys and values of a run of tokens), so the reads stream through the projection's
  // output in order, and each value row is checked for non-finite floats on the way.
  const std::size_t row = tiles::packed_row(s.head_dim), head_size = s.tokens * row;
  // Left uninitialised (new float[], not a vector's zeros): every float is written below, and zeroing
  // 2 x 25 MB first cost as much again at GPT-2's B8 T1024.
  const std::size_t packed = s.batch * s.kv_heads * head_size;
  const std::unique_ptr<float[]> kp(new float[packed]), vp(new float[packed]);  // (B, kv_heads, T, row)
  std::vector<unsigned char> bad_rows(s.batch * s.tokens);  // (B, T): a value row not all finite
  constexpr std::size_t kPackTokens = 64;
  const std::size_t chunks = (s.tokens + kPackTokens - 1) / kPackTokens;
  parallel_tasks(threads, s.batch * chunks, [&](std::size_t task, unsigned) {
    const std::size_t b = task / chunks, j0 = task % chunks * kPackTokens, j1 = std::min(s.tokens, j0 + kPackTokens);
    for (std::size_t j = j0; j < j1; ++j) {
      const float* k = io.k + (b * s.tokens + j) * io.ldk;  // (kv_heads, hd)
      const float* v = io.v + (b * s.tokens + j) * io.ldv;  // (kv_heads, hd)
      bad_rows[b * s.tokens + j] = !kernels.all_finite(v, s.kv_heads * s.head_dim);
      for (std::size_t g = 0; g < s.kv_heads; ++g) {
        float* krow = kp.get() + (b * s.kv_heads + g) * head_size + j * row;
        float* vrow = vp.get() + (b * s.kv_heads + g) * head_size + j * row;
        std::fill(std::copy(k + g * s.head_dim, k + (g + 1) * s.head_dim, krow), krow + row, 0.0f);
        std::fill(std::copy(v + g * s.head_dim, v + (g + 1) * s.head_dim, vrow), vrow + row, 0.0f);
      }
    }
  });
  const std::vector<std::ptrdiff_t> last_nonfinite = last_nonfinite_values(s, io, bad_rows);  // (B, kv_heads, hd)
  std::vector<tiles::FusedScratch> scratch;  // one per thread
  for (unsigned t = 0; t < threads; ++t) scratch.push_back(tiles::fused_scratch(s.head_dim));
  // The tasks go out largest first (the last query tiles see the most keys), so threads finish together.
  parallel_tasks(threads, tasks, [&](std::size_t t, unsigned thread) {
    const std::size_t tile = tiles_per_head - 1 - t / (s.batch * s.heads);
    const std::size_t bh = t % (s.batch * s.heads);
    const std::size_t b = bh / s.heads, h = bh % s.heads, bg = b * s.kv_heads + s.kv_head(h);
    kernels.fused_task(s, io, b, h, tile * tiles::kFusedTileQ, kp.get() + bg * head_size, vp.get() + bg * head_size,
                       last_nonfinite.data() + bg * s.head_dim, scratch[thread]);
  });
}

void decode_attention(const DecodeShape& s, const DecodeIO& io, unsigned threads) {
  decode_attention_with(fast_vector_isa(), s, io, threads);
}

void decode_attention_with(VectorIsa isa, const DecodeShape& s, const DecodeIO& io, unsigned threads) {
  const tiles::IsaKernels& kernels = tiles::kernels_for(isa);
  const std::size_t T = s.cache_tokens, hd = s.head_dim, H = s.heads;
  // Parts of whole cache rows (every key/value head of a run of tokens): about four per thread, of at
  // least 128 tokens, so that each is a long run of memory and the threads still finish together.
  threads = std::max(1u, threads);
  const std::size_t per_part = std::max<std::size_t>(128, (T + 4 * threads - 1) / (4 * threads));
  const std::size_t parts = (T + per_part - 1) / per_part;
  std::vector<float> part_max(parts * H), part_sum(parts * H), part_out(parts * H * hd);
  threads = std::min<unsigned>(threads, static_cast<unsigned>(parts));
  // Each thread's scores, (H, per_part), in one block left uninitialised: a decode step is a few hundred
  // microseconds, and a vector of vectors copied and zeroed its scratch on every one.
  const std::unique_ptr<float[]> scores(new float[threads * H * per_part]);
  parallel_tasks(threads, parts, [&](std::size_t p, unsigned thread) {
    const std::size_t j0 = p * per_part, j1 = std::min(T, j0 + per_part);
    kernels.decode_part(s, io, j0, j1, part_max.data() + p * H, part_sum.data() + p * H, part_out.data() + p * H * hd,
                        scores.get() + thread * H * per_part);
  });
  // Merge: each part's sum and output rescaled from its own maximum to the head's.
  for (std::size_t h = 0; h < H; ++h) {
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t p = 0; p < parts; ++p) {
      const float pm = part_max[p * H + h];
      m = (pm > m || pm != pm) ? pm : m;
    }
    float total = 0.0f;
    float* out = io.out + h * hd;
    std::fill(out, out + hd, 0.0f);
    for (std::size_t p = 0; p < parts; ++p) {
      const float c = torch_exp(part_max[p * H + h] - m);
      total += part_sum[p * H + h] * c;
      for (std::size_t d = 0; d < hd; ++d) out[d] += part_out[(p * H + h) * hd + d] * c;
    }
    for (std::size_t d = 0; d < hd; ++d) out[d] /= total;
  }
}

IsaInfo isa_info(VectorIsa isa) {
  const tiles::IsaKernels& k = tiles::kernels_for(isa);
  return {isa_name(isa), k.mr, k.nr};
}

bool set_fast_isa(VectorIsa isa) {
  if (!cpu_runs(isa)) return false;
  // The CPU's widest build is what runs without --isa: oneDNN keeps its own widest kernels too (capping it
  // at AVX-512's common core would drop the VNNI and BF16 ones it picks on such a CPU).
  if (isa == best_vector_isa()) {
    fast_isa_slot() = isa;
    return true;
  }
  // A narrower build than the CPU's widest (AVX-512 is the widest there is, so never it): oneDNN's AVX2, or
  // SSE4.1 for the portable build, the x86-64 baseline oneDNN's JIT needs at least.
  const dnnl_cpu_isa_t cap = isa == VectorIsa::Avx2 ? dnnl_cpu_isa_avx2 : dnnl_cpu_isa_sse41;
  if (dnnl_set_max_cpu_isa(cap) != dnnl_success) return false;
  fast_isa_slot() = isa;
  return true;
}

bool pin_fast_threads(bool pin, unsigned threads) {
#if defined(_OPENMP) && defined(__linux__)
  // The user's own OpenMP placement wins: with any of these set, libgomp has placed its threads already.
  static const bool placed_by_user = std::getenv("OMP_PROC_BIND") != nullptr || std::getenv("OMP_PLACES") != nullptr ||
                                     std::getenv("GOMP_CPU_AFFINITY") != nullptr;
  // The CPUs the main thread may use (nobody has bound it, above), as they were before the first pin, as a
  // set and in order; read once (the bench binds and unbinds around every run).
  struct Allowed {
    bool read = false;
    cpu_set_t set;
    std::vector<int> cpus;
  };
  static const Allowed allowed = [] {
    Allowed a;
    CPU_ZERO(&a.set);
    a.read = sched_getaffinity(0, sizeof a.set, &a.set) == 0;
    for (int c = 0; a.read && c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &a.set)) a.cpus.push_back(c);
    return a;
  }();
  threads = std::max(1u, threads);
  // Fewer CPUs than threads (taskset, a cpuset): where each runs is the scheduler's call.
  if (placed_by_user || !allowed.read || allowed.cpus.size() < threads) return false;
  std::atomic<bool> ok{true};
#pragma omp parallel num_threads(threads)
  {
    cpu_set_t set = allowed.set;
    if (pin) {
      CPU_ZERO(&set);
      CPU_SET(allowed.cpus[static_cast<std::size_t>(omp_get_thread_num())], &set);
    }
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) ok = false;
  }
  return ok;
#else
  (void)pin;
  (void)threads;
  return false;
#endif
}

void set_fast_threads(unsigned threads) {
  threads = std::max(1u, threads);
  set_compute_threads(threads);
#ifdef _OPENMP
  omp_set_num_threads(static_cast<int>(threads));
#endif
}

const char* onednn_isa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

double fma_peak_gflops(VectorIsa isa, unsigned threads, double seconds) {
  const tiles::IsaKernels& k = tiles::kernels_for(isa);
  // Find a round count that takes about a tenth of the time on one thread, then time all threads at once.
  std::size_t iters = 1 << 16;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile float sink = k.fma_chains(iters);
    (void)sink;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds / 10 || iters > (1ull << 40))
      break;
    iters *= 2;
  }
  // Three timings of about a sixth of `seconds` each, and the best: one of a single half was as often as
  // not shared with another program on a busy machine, and the bench's rows then ran at 134% of the "peak".
  iters = static_cast<std::size_t>(static_cast<double>(iters) * 5 / 3);
  threads = std::max(1u, threads);
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<double> elapsed(threads);
    on_threads(threads, [&](unsigned t) {
      const auto t0 = std::chrono::steady_clock::now();
      volatile float sink = k.fma_chains(iters);
      (void)sink;
      elapsed[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    const double slowest = *std::max_element(elapsed.begin(), elapsed.end());
    best = std::max(best, static_cast<double>(threads) * static_cast<double>(iters) *
                              static_cast<double>(k.fma_chain_flops) / slowest / 1e9);
  }
  return best;
}

void fast_linear(const float* x, std::size_t rows, std::size_t k, const float* w, std::size_t n, const float* bias,
                 float* out) {
  if (rows == 0 || n == 0) return;
  const auto dim = [](std::size_t v) { return static_cast<dnnl_dim_t>(v); };
  // Row-major C = A B^T: x (rows, k) by w (n, k) transposed.
  const dnnl_status_t status = dnnl_sgemm('N', 'T', dim(rows), dim(n), dim(k), 1.0f, x, dim(k), w, dim(k), 0.0f, out,
                                          dim(n));
  if (status != dnnl_success) throw std::runtime_error("oneDNN's sgemm failed (status " + std::to_string(status) + ")");
  // The bias on OpenMP's team too: one pass over the output, 1 ms of out_proj's 46 on two cores here, is a
  // serial part that Amdahl's law makes 4% of a forward at 16 CPUs.
  if (bias == nullptr) return;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (rows * n >= (std::size_t{1} << 16))
#endif
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < n; ++c) out[r * n + c] += bias[c];
}


Tensor3 mha_forward_fused(const AttentionWeights& w, const Tensor3& x, unsigned threads) {
  const Linear &W_query = w.W_query, &W_key = w.W_key, &W_value = w.W_value, &out_proj = w.out_proj;
  const std::size_t num_heads = w.heads;
  const std::size_t b = x.shape(0), n = x.shape(1), d_out = W_query.weight.shape(0), head_dim = d_out / num_heads;
  // One projection for all three: rows [W_query; W_key; W_value] (3 d_out, d_in), biases alike; stacked
  // with plain copies (xtensor's lazy concatenate costs more than the rest of the set-up together).
  // Each part on a thread of its own: 7 MB of weights copied, 0.8 ms, serial, is another part that grows
  // with the CPUs.
  const auto stack = [threads](const auto& a, const auto& b, const auto& c, auto& out) {
    parallel_tasks(threads, 3, [&](std::size_t part, unsigned) {
      const auto& from = part == 0 ? a : part == 1 ? b : c;
      const std::size_t at = part == 0 ? 0 : part == 1 ? a.size() : a.size() + b.size();
      std::copy(from.begin(), from.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
    });
  };
  Linear qkv = W_query;
  qkv.weight = xt::empty<float>({3 * d_out, W_query.weight.shape(1)});  // (3 d_out, d_in)
  stack(W_query.weight, W_key.weight, W_value.weight, qkv.weight);
  if (W_query.bias.size() > 0) {
    qkv.bias = xt::empty<float>({3 * d_out});  // (3 d_out,)
    stack(W_query.bias, W_key.bias, W_value.bias, qkv.bias);
  }
  // The projections through oneDNN (its threads), the attention on ours: nothing here goes through OpenBLAS.
  const std::size_t rows = b * n, d_in = x.shape(2), ld = 3 * d_out;
  Tensor3 proj = xt::empty<float>({b, n, ld});  // (b, n, 3 d_out): queries | keys | values
  fast_linear(x.data(), rows, d_in, qkv.weight.data(), ld, qkv.bias.size() ? qkv.bias.data() : nullptr, proj.data());
  Tensor3 context = xt::empty<float>({b, n, d_out});  // (b, n, d_out)
  causal_attention_fused({b, n, num_heads, num_heads, head_dim},
                         {proj.data(), ld, proj.data() + d_out, ld, proj.data() + 2 * d_out, ld, context.data(), d_out},
                         threads);
  Tensor3 out = xt::empty<float>({b, n, d_out});  // (b, n, d_out): out_proj(context)
  fast_linear(context.data(), rows, d_out, out_proj.weight.data(), d_out, out_proj.bias.data(), out.data());
  return out;
}

Tensor3 gqa_forward_fused(const AttentionWeights& w, const Tensor3& x, unsigned threads) {
  const Linear &W_query = w.W_query, &W_key = w.W_key, &W_value = w.W_value, &out_proj = w.out_proj;
  const std::size_t num_heads = w.heads, num_kv_groups = w.kv_heads;
  const std::size_t b = x.shape(0), n = x.shape(1), d_out = W_query.weight.shape(0), head_dim = d_out / num_heads,
                    kv = num_kv_groups * head_dim;
  // The projections through oneDNN (its threads), the attention on ours: nothing here goes through OpenBLAS.
  const std::size_t rows = b * n, d_in = x.shape(2);
  const auto project = [&](const Linear& layer, std::size_t width) {
    Tensor3 y = xt::empty<float>({b, n, width});  // (b, n, width)
    fast_linear(x.data(), rows, d_in, layer.weight.data(), width, layer.bias.size() ? layer.bias.data() : nullptr,
                y.data());
    return y;
  };
  const Tensor3 queries = project(W_query, d_out);  // (b, n, d_out)
  const Tensor3 keys = project(W_key, kv);          // (b, n, kv_groups * hd)
  const Tensor3 values = project(W_value, kv);      // (b, n, kv_groups * hd)
  Tensor3 context = xt::empty<float>({b, n, d_out});  // (b, n, d_out)
  causal_attention_fused({b, n, num_heads, num_kv_groups, head_dim},
                         {queries.data(), d_out, keys.data(), kv, values.data(), kv, context.data(), d_out}, threads);
  Tensor3 out = xt::empty<float>({b, n, d_out});  // (b, n, d_out): out_proj, no bias
  fast_linear(context.data(), rows, d_out, out_proj.weight.data(), d_out,
              out_proj.bias.size() ? out_proj.bias.data() : nullptr, out.data());  // the book's GQA: no bias
  return out;
}

}  // namespace attn
