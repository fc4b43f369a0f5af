#include "core/kernels.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include <cblas.h>
#include <dnnl.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <xtensor/xadapt.hpp>

#include "core/nn.hpp"
#include "core/tile_kernels.hpp"

namespace attn {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::size_t kv_head_of(const AttentionShape& s, std::size_t h) { return h / (s.heads / s.kv_heads); }

// x[i] = exp(x[i] - shift) for n floats, returning their sum. Vectorised with SLEEF's AVX-512 or AVX2 exp
// where the CPU has them, scalar SLEEF otherwise; all three give the same bits as torch_exp.
__attribute__((target("avx2,fma"))) float exp_shift_sum_avx2(float* x, std::size_t n, float shift) {
  const __m256 vshift = _mm256_set1_ps(shift);
  __m256 vsum = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), vshift));
    _mm256_storeu_ps(x + i, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vsum);
  float sum = 0.0f;
  for (float l : lanes) sum += l;
  for (; i < n; ++i) {
    x[i] = torch_exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

// The same loop as above, sixteen lanes wide: kept as a twin rather than a template, because a function's
// target attribute (and so which intrinsics it may use) cannot be a template parameter.
__attribute__((target("avx512f"))) float exp_shift_sum_avx512(float* x, std::size_t n, float shift) {
  const __m512 vshift = _mm512_set1_ps(shift);
  __m512 vsum = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = Sleef_expf16_u10avx512f(_mm512_sub_ps(_mm512_loadu_ps(x + i), vshift));
    _mm512_storeu_ps(x + i, e);
    vsum = _mm512_add_ps(vsum, e);
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, vsum);
  float sum = 0.0f;
  for (float l : lanes) sum += l;
  for (; i < n; ++i) {
    x[i] = torch_exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

// max(init, x[0..n)), NaN if any value or init is NaN (PyTorch's rule): the scalar loop (nn's, which the
// compiler does not vectorise on its own), and sixteen and eight lanes at a time, lanes and tail folded by
// the scalar loop. Scores overflow to inf and NaN for huge inputs, and max_ps alone would drop a NaN
// (it returns its second operand when either is NaN), so the vector loops also note whether any lane
// held NaN.
float max_scalar(const float* x, std::size_t n, float init) { return max_propagating_nan(x, n, init); }

__attribute__((target("avx512f"))) float max_avx512(const float* x, std::size_t n, float init) {
  __m512 vmax = _mm512_set1_ps(init);
  std::size_t i = 0;
  // The masked form with every lane set is the same instruction; the plain _mm512_max_ps (and
  // _mm512_reduce_max_ps) pass GCC 12 an undefined temporary it then warns about.
  __mmask16 nan_lanes = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vmax = _mm512_mask_max_ps(vmax, 0xFFFF, vmax, v);
    nan_lanes = static_cast<__mmask16>(nan_lanes | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q));
  }
  if (nan_lanes != 0) return std::numeric_limits<float>::quiet_NaN();
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, vmax);
  return max_scalar(lanes, 16, max_scalar(x + i, n - i, init));
}

__attribute__((target("avx2"))) float max_avx2(const float* x, std::size_t n, float init) {
  __m256 vmax = _mm256_set1_ps(init);
  std::size_t i = 0;
  __m256 nan_lanes = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    vmax = _mm256_max_ps(vmax, v);
    nan_lanes = _mm256_or_ps(nan_lanes, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  if (_mm256_movemask_ps(nan_lanes) != 0) return std::numeric_limits<float>::quiet_NaN();
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  return max_scalar(lanes, 8, max_scalar(x + i, n - i, init));
}

float exp_shift_sum_scalar(float* x, std::size_t n, float shift) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = torch_exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

// The best build this CPU runs, asked once (a function-local static: the CPU model is known by then).
VectorIsa best_isa() {
  static const VectorIsa best = best_vector_isa();
  return best;
}

float exp_shift_sum(float* x, std::size_t n, float shift) { return exp_shift_sum_with(best_isa(), x, n, shift); }
float row_max(const float* x, std::size_t n, float init) { return max_with(best_isa(), x, n, init); }

// PyTorch multiplies the whole (T, T) weights by the values, so a future key's weight, 0, meets its value
// too, and 0 * inf or 0 * NaN is NaN: a non-finite value poisons that column of the context of every
// earlier query. The fused kernel never reads the values of tiles wholly in the future, so it is told,
// per (batch, kv head, column), the last row whose value there is not finite (-1: none).
std::vector<std::ptrdiff_t> last_nonfinite_values(const AttentionShape& s, const AttentionIO& io,
                                                  const tiles::IsaKernels& kernels) {
  const std::size_t T = s.tokens, hd = s.head_dim;
  std::vector<std::ptrdiff_t> last(s.batch * s.kv_heads * hd, -1);  // (B, kv_heads, hd)
  for (std::size_t b = 0; b < s.batch; ++b)
    for (std::size_t j = 0; j < T; ++j) {
      const float* row = io.v + (b * T + j) * io.ldv;
      if (kernels.all_finite(row, s.kv_heads * hd)) continue;  // the common case, a vector at a time
      for (std::size_t c = 0; c < s.kv_heads * hd; ++c)
        if (!std::isfinite(row[c])) last[b * s.kv_heads * hd + c] = static_cast<std::ptrdiff_t>(j);
    }
  return last;
}

// Runs body(i) for i in [0, threads) on that many threads (the caller's thread is one of them).
template <class F>
void on_threads(unsigned threads, F body) {
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(body, i);
  body(0u);
  for (auto& t : pool) t.join();
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

VectorIsa best_vector_isa() {
  if (__builtin_cpu_supports("avx512f")) return VectorIsa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::Avx2;
  return VectorIsa::Scalar;
}

float max_with(VectorIsa isa, const float* x, std::size_t n, float init) {
  switch (isa) {
    case VectorIsa::Avx512: return max_avx512(x, n, init);
    case VectorIsa::Avx2: return max_avx2(x, n, init);
    case VectorIsa::Scalar: break;
  }
  return max_scalar(x, n, init);
}

float exp_shift_sum_with(VectorIsa isa, float* x, std::size_t n, float shift) {
  switch (isa) {
    case VectorIsa::Avx512: return exp_shift_sum_avx512(x, n, shift);
    case VectorIsa::Avx2: return exp_shift_sum_avx2(x, n, shift);
    case VectorIsa::Scalar: break;
  }
  return exp_shift_sum_scalar(x, n, shift);
}

SingleThreadedBlas::SingleThreadedBlas() : saved_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
SingleThreadedBlas::~SingleThreadedBlas() { openblas_set_num_threads(saved_); }

void linear_rows(const float* x, std::size_t rows, std::size_t k, const float* w, std::size_t n, const float* bias,
                 float* out, unsigned threads) {
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(rows)));
  on_threads(threads, [&](unsigned t) {
    const std::size_t first = rows * t / threads, last = rows * (t + 1) / threads;
    if (first == last) return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(last - first), static_cast<int>(n),
                static_cast<int>(k), 1.0f, x + first * k, static_cast<int>(k), w, static_cast<int>(k), 0.0f,
                out + first * n, static_cast<int>(n));
    if (bias != nullptr)
      for (std::size_t r = first; r < last; ++r)
        for (std::size_t c = 0; c < n; ++c) out[r * n + c] += bias[c];
  });
}

void causal_attention_reference(const AttentionShape& s, const AttentionIO& io) {
  const std::size_t T = s.tokens, hd = s.head_dim;
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(hd)));
  std::vector<float> scores(T * T);  // (T, T)
  std::vector<float> weights(T * T);  // (T, T)
  for (std::size_t b = 0; b < s.batch; ++b)
    for (std::size_t h = 0; h < s.heads; ++h) {
      const std::size_t kvh = kv_head_of(s, h);
      const float* q = io.q + b * T * io.ldq + h * hd;
      const float* k = io.k + b * T * io.ldk + kvh * hd;
      const float* v = io.v + b * T * io.ldv + kvh * hd;
      // scores[i][j] = q_i . k_j / sqrt(hd), -inf where j > i
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < T; ++j)
          scores[i * T + j] = j > i ? kNegInf : dot(hd, q + i * io.ldq, 1, k + j * io.ldk, 1) / scale;
      const Matrix sm = softmax(Matrix(xt::adapt(scores, {T, T})));  // (T, T)
      std::copy(sm.begin(), sm.end(), weights.begin());
      // out_i = sum_j weights[i][j] v_j over every key, the future's zero weights included, as PyTorch's
      // product does (0 * inf is NaN)
      float* out = io.out + b * T * io.ldo + h * hd;
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t d = 0; d < hd; ++d) {
          float acc = 0.0f;
          for (std::size_t j = 0; j < T; ++j) acc += weights[i * T + j] * v[j * io.ldv + d];
          out[i * io.ldo + d] = acc;
        }
    }
}

void causal_attention_fused(const AttentionShape& s, const AttentionIO& io, unsigned threads) {
  causal_attention_fused_with(best_isa(), s, io, threads);
}

void causal_attention_fused_with(VectorIsa isa, const AttentionShape& s, const AttentionIO& io, unsigned threads) {
  const tiles::IsaKernels& kernels = tiles::kernels_for(isa);
  const std::size_t tiles_per_head = (s.tokens + tiles::kFusedTileQ - 1) / tiles::kFusedTileQ;
  const std::size_t tasks = s.batch * s.heads * tiles_per_head;
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::min<std::size_t>(tasks, 1u << 16))));
  const std::vector<std::ptrdiff_t> last_nonfinite = last_nonfinite_values(s, io, kernels);  // (B, kv_heads, hd)
  // Each (batch, key/value head)'s keys and values packed into contiguous (T, hd) rows of `row` floats,
  // zero past hd: in place they lie a whole projection row apart, a stride at which the L1 cache keeps
  // only a few of them, and every query tile of the head would copy them again.
  const std::size_t row = tiles::packed_row(s.head_dim), head_size = s.tokens * row;
  // Left uninitialised (new float[], not a vector's zeros): every float is written below, and zeroing
  // 2 x 25 MB first cost as much again at GPT-2's B8 T1024.
  const std::size_t packed = s.batch * s.kv_heads * head_size;
  const std::unique_ptr<float[]> kp(new float[packed]), vp(new float[packed]);  // (B, kv_heads, T, row)
  parallel_tasks(threads, s.batch * s.kv_heads, [&](std::size_t bg, unsigned) {
    const std::size_t b = bg / s.kv_heads, g = bg % s.kv_heads;
    for (std::size_t j = 0; j < s.tokens; ++j) {
      const float* k = io.k + (b * s.tokens + j) * io.ldk + g * s.head_dim;
      const float* v = io.v + (b * s.tokens + j) * io.ldv + g * s.head_dim;
      float* krow = kp.get() + bg * head_size + j * row;
      float* vrow = vp.get() + bg * head_size + j * row;
      std::fill(std::copy(k, k + s.head_dim, krow), krow + row, 0.0f);
      std::fill(std::copy(v, v + s.head_dim, vrow), vrow + row, 0.0f);
    }
  });
  std::vector<tiles::FusedScratch> scratch;  // one per thread
  for (unsigned t = 0; t < threads; ++t) scratch.push_back(tiles::fused_scratch(s.head_dim));
  // The tasks go out largest first (the last query tiles see the most keys), so threads finish together.
  parallel_tasks(threads, tasks, [&](std::size_t t, unsigned thread) {
    const std::size_t tile = tiles_per_head - 1 - t / (s.batch * s.heads);
    const std::size_t bh = t % (s.batch * s.heads);
    const std::size_t b = bh / s.heads, h = bh % s.heads, bg = b * s.kv_heads + kv_head_of(s, h);
    kernels.fused_task(s, io, b, h, tile * tiles::kFusedTileQ, kp.get() + bg * head_size, vp.get() + bg * head_size,
                       last_nonfinite.data() + bg * s.head_dim, scratch[thread]);
  });
}

void decode_attention_reference(const DecodeShape& s, const DecodeIO& io) {
  const std::size_t T = s.cache_tokens, hd = s.head_dim, group = s.heads / s.kv_heads;
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(hd)));
  std::vector<float> scores(T);  // (T,)
  for (std::size_t h = 0; h < s.heads; ++h) {
    const std::size_t g = h / group;
    const float* q = io.q + h * hd;
    for (std::size_t j = 0; j < T; ++j) scores[j] = dot(hd, q, 1, io.k + j * io.ld + g * hd, 1) / scale;
    const Matrix weights = softmax(Matrix(xt::adapt(scores, {std::size_t{1}, T})));  // (1, T)
    for (std::size_t d = 0; d < hd; ++d) {
      float acc = 0.0f;
      for (std::size_t j = 0; j < T; ++j) acc += weights(0, j) * io.v[j * io.ld + g * hd + d];
      io.out[h * hd + d] = acc;
    }
  }
}

void decode_attention(const DecodeShape& s, const DecodeIO& io, unsigned threads) {
  decode_attention_with(best_isa(), s, io, threads);
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
  std::vector<std::vector<float>> scores(threads, std::vector<float>(H * per_part));  // per thread
  parallel_tasks(threads, parts, [&](std::size_t p, unsigned thread) {
    const std::size_t j0 = p * per_part, j1 = std::min(T, j0 + per_part);
    kernels.decode_part(s, io, j0, j1, part_max.data() + p * H, part_sum.data() + p * H, part_out.data() + p * H * hd,
                        scores[thread].data());
  });
  // Merge: each part's sum and output rescaled from its own maximum to the head's.
  for (std::size_t h = 0; h < H; ++h) {
    float m = kNegInf;
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
  switch (isa) {
    case VectorIsa::Avx512: return {"avx512", k.mr, k.nr};
    case VectorIsa::Avx2: return {"avx2", k.mr, k.nr};
    case VectorIsa::Scalar: break;
  }
  return {"portable", k.mr, k.nr};
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
  iters = static_cast<std::size_t>(static_cast<double>(iters) * 5);  // about half of `seconds`
  threads = std::max(1u, threads);
  std::vector<double> elapsed(threads);
  on_threads(threads, [&](unsigned t) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile float sink = k.fma_chains(iters);
    (void)sink;
    elapsed[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  const double slowest = *std::max_element(elapsed.begin(), elapsed.end());
  return static_cast<double>(threads) * static_cast<double>(iters) * static_cast<double>(k.fma_chain_flops) / slowest / 1e9;
}

void fast_linear(const float* x, std::size_t rows, std::size_t k, const float* w, std::size_t n, const float* bias,
                 float* out) {
  if (rows == 0 || n == 0) return;
  const auto dim = [](std::size_t v) { return static_cast<dnnl_dim_t>(v); };
  // Row-major C = A B^T: x (rows, k) by w (n, k) transposed.
  const dnnl_status_t status = dnnl_sgemm('N', 'T', dim(rows), dim(n), dim(k), 1.0f, x, dim(k), w, dim(k), 0.0f, out,
                                          dim(n));
  if (status != dnnl_success) throw std::runtime_error("oneDNN's sgemm failed (status " + std::to_string(status) + ")");
  if (bias != nullptr)
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < n; ++c) out[r * n + c] += bias[c];
}

void causal_attention_unfused(const AttentionShape& s, const AttentionIO& io, unsigned threads) {
  const std::size_t T = s.tokens, hd = s.head_dim, BH = s.batch * s.heads;
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(hd)));
  std::vector<float> scores(BH * T * T);  // (B, heads, T, T)
  for (std::size_t bh = 0; bh < BH; ++bh) {
    const std::size_t b = bh / s.heads, h = bh % s.heads, kvh = kv_head_of(s, h);
    // attn_scores = queries @ keys.transpose(2, 3), one head at a time on strided views
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(T), static_cast<int>(T),
                static_cast<int>(hd), 1.0f, io.q + b * T * io.ldq + h * hd, static_cast<int>(io.ldq),
                io.k + b * T * io.ldk + kvh * hd, static_cast<int>(io.ldk), 0.0f, scores.data() + bh * T * T,
                static_cast<int>(T));
  }
  // masked_fill(-inf), / sqrt(hd), softmax: row r is query r % T of its head.
  const std::size_t rows = BH * T;
  const auto softmax_rows = [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) {
      float* row = scores.data() + r * T;
      const std::size_t visible = r % T + 1;
      for (std::size_t j = 0; j < visible; ++j) row[j] /= scale;
      const float m = row_max(row, visible, kNegInf);
      const float inv = 1.0f / exp_shift_sum(row, visible, m);
      for (std::size_t j = 0; j < visible; ++j) row[j] *= inv;
      std::fill(row + visible, row + T, 0.0f);
    }
  };
  threads = std::max(1u, threads);
  on_threads(threads, [&](unsigned t) { softmax_rows(rows * t / threads, rows * (t + 1) / threads); });
  for (std::size_t bh = 0; bh < BH; ++bh) {
    const std::size_t b = bh / s.heads, h = bh % s.heads, kvh = kv_head_of(s, h);
    // context = attn_weights @ values, written straight into the head's columns of the output
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(T), static_cast<int>(hd),
                static_cast<int>(T), 1.0f, scores.data() + bh * T * T, static_cast<int>(T),
                io.v + b * T * io.ldv + kvh * hd, static_cast<int>(io.ldv), 0.0f, io.out + b * T * io.ldo + h * hd,
                static_cast<int>(io.ldo));
  }
}

double causal_attention_flops(const AttentionShape& s) {
  const double pairs = static_cast<double>(s.tokens) * static_cast<double>(s.tokens + 1) / 2.0;
  return 2.0 * 2.0 * static_cast<double>(s.batch * s.heads * s.head_dim) * pairs;
}

}  // namespace attn
