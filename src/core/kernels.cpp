#include "core/kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include <cblas.h>
#include <immintrin.h>
#include <sleef.h>
#include <xtensor/xadapt.hpp>

#include "core/nn.hpp"

// libsleef exports its AVX2 and AVX-512 functions on every x86-64 build; sleef.h declares them only when
// the including code is compiled for those instruction sets (this file is not; the functions calling them
// are, by target attribute). The declarations carry the same target so that clang, too, accepts the
// vector arguments' ABI.
#ifndef __AVX2__
extern "C" __attribute__((target("avx2,fma"))) __m256 Sleef_expf8_u10avx2(__m256);
#endif
#ifndef __AVX512F__
extern "C" __attribute__((target("avx512f"))) __m512 Sleef_expf16_u10avx512f(__m512);
#endif

namespace attn {

namespace {

constexpr std::size_t kTileQ = 128;  // query rows per task
constexpr std::size_t kTileK = 512;  // key rows per inner step
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

// Per-thread scratch of the fused kernel.
struct Scratch {
  std::vector<float> scores;  // (kTileQ, kTileK)
  std::vector<float> acc;     // (kTileQ, hd): the running, unnormalised output
  std::vector<float> row_max;  // (kTileQ,)
  std::vector<float> row_sum;  // (kTileQ,)
};

// PyTorch multiplies the whole (T, T) weights by the values, so a future key's weight, 0, meets its value
// too, and 0 * inf or 0 * NaN is NaN: a non-finite value poisons that column of the context of every
// earlier query. The fused kernel never reads the values of tiles wholly in the future, so it is told,
// per (batch, kv head, column), the last row whose value there is not finite (-1: none).
std::vector<std::ptrdiff_t> last_nonfinite_values(const AttentionShape& s, const AttentionIO& io) {
  const std::size_t T = s.tokens, hd = s.head_dim;
  std::vector<std::ptrdiff_t> last(s.batch * s.kv_heads * hd, -1);  // (B, kv_heads, hd)
  for (std::size_t b = 0; b < s.batch; ++b)
    for (std::size_t j = 0; j < T; ++j) {
      const float* row = io.v + (b * T + j) * io.ldv;
      for (std::size_t c = 0; c < s.kv_heads * hd; ++c)
        if (!std::isfinite(row[c])) last[b * s.kv_heads * hd + c] = static_cast<std::ptrdiff_t>(j);
    }
  return last;
}

// One task: query rows [q0, q0 + nq) of head h in batch b. last_nonfinite: this (batch, kv head)'s hd
// entries of last_nonfinite_values.
void fused_tile(const AttentionShape& s, const AttentionIO& io, std::size_t b, std::size_t h, std::size_t q0,
                const std::ptrdiff_t* last_nonfinite, Scratch& w) {
  const std::size_t T = s.tokens, hd = s.head_dim, kvh = kv_head_of(s, h);
  const std::size_t nq = std::min(kTileQ, T - q0);
  const float scale = 1.0f / static_cast<float>(std::sqrt(static_cast<double>(hd)));
  const float* q = io.q + (b * T + q0) * io.ldq + h * hd;  // (nq, hd), rows ldq apart
  const float* kbase = io.k + b * T * io.ldk + kvh * hd;   // (T, hd), rows ldk apart
  const float* vbase = io.v + b * T * io.ldv + kvh * hd;   // (T, hd), rows ldv apart
  float* acc = w.acc.data();                                // (nq, hd)
  std::fill(acc, acc + nq * hd, 0.0f);
  std::fill(w.row_max.begin(), w.row_max.begin() + static_cast<std::ptrdiff_t>(nq), kNegInf);
  std::fill(w.row_sum.begin(), w.row_sum.begin() + static_cast<std::ptrdiff_t>(nq), 0.0f);

  const std::size_t k_end = q0 + nq;  // keys past the last query row are all in the future: skipped
  for (std::size_t k0 = 0; k0 < k_end; k0 += kTileK) {
    const std::size_t nk = std::min(kTileK, k_end - k0);
    float* S = w.scores.data();  // (nq, nk), rows kTileK apart
    // S = scale * Q_tile @ K_tile^T
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(nq), static_cast<int>(nk),
                static_cast<int>(hd), scale, q, static_cast<int>(io.ldq), kbase + k0 * io.ldk,
                static_cast<int>(io.ldk), 0.0f, S, static_cast<int>(kTileK));
    const bool crosses_diagonal = k0 + nk > q0 + 1;
    for (std::size_t i = 0; i < nq; ++i) {
      float* row = S + i * kTileK;
      // Keys visible to query q0 + i in this tile: k0 .. min(q0 + i, k0 + nk - 1).
      const std::size_t visible = crosses_diagonal ? std::min(nk, q0 + i + 1 - std::min(q0 + i + 1, k0)) : nk;
      if (visible == 0) {  // the whole tile is in this row's future
        std::fill(row, row + nk, 0.0f);
        continue;
      }
      const float m = row_max(row, visible, w.row_max[i]);
      const float correction = torch_exp(w.row_max[i] - m);  // exp(-inf) = 0 on the first tile
      const float sum = exp_shift_sum(row, visible, m);
      std::fill(row + visible, row + nk, 0.0f);
      w.row_sum[i] = w.row_sum[i] * correction + sum;
      w.row_max[i] = m;
      if (correction != 1.0f)
        for (std::size_t d = 0; d < hd; ++d) acc[i * hd + d] *= correction;
    }
    // acc += P_tile @ V_tile
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(nq), static_cast<int>(hd),
                static_cast<int>(nk), 1.0f, S, static_cast<int>(kTileK), vbase + k0 * io.ldv,
                static_cast<int>(io.ldv), 1.0f, acc, static_cast<int>(hd));
  }
  float* out = io.out + (b * T + q0) * io.ldo + h * hd;
  for (std::size_t i = 0; i < nq; ++i) {
    const float inv = 1.0f / w.row_sum[i];
    for (std::size_t d = 0; d < hd; ++d)
      out[i * io.ldo + d] = last_nonfinite[d] >= static_cast<std::ptrdiff_t>(k_end)  // a skipped key's 0 * inf
                                ? std::numeric_limits<float>::quiet_NaN()
                                : acc[i * hd + d] * inv;
  }
}

// Runs body(i) for i in [0, threads) on that many threads (the caller's thread is one of them).
template <class F>
void on_threads(unsigned threads, F body) {
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(body, i);
  body(0u);
  for (auto& t : pool) t.join();
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
  const std::size_t tiles = (s.tokens + kTileQ - 1) / kTileQ;
  const std::size_t tasks = s.batch * s.heads * tiles;
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(tasks)));
  // Hand out the tasks largest first (the last query tiles see the most keys), so threads finish together.
  std::atomic<std::size_t> next{0};
  const std::vector<std::ptrdiff_t> last_nonfinite = last_nonfinite_values(s, io);  // (B, kv_heads, hd)
  const auto worker = [&] {
    Scratch w{std::vector<float>(kTileQ * kTileK), std::vector<float>(kTileQ * s.head_dim),
              std::vector<float>(kTileQ), std::vector<float>(kTileQ)};
    for (std::size_t t = next++; t < tasks; t = next++) {
      const std::size_t tile = tiles - 1 - t / (s.batch * s.heads);
      const std::size_t bh = t % (s.batch * s.heads);
      const std::size_t b = bh / s.heads, h = bh % s.heads;
      fused_tile(s, io, b, h, tile * kTileQ, last_nonfinite.data() + (b * s.kv_heads + kv_head_of(s, h)) * s.head_dim,
                 w);
    }
  };
  const SingleThreadedBlas one_blas_thread;
  on_threads(threads, [&](unsigned) { worker(); });
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
