#include "kernels/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include <cblas.h>
#include <xtensor/xadapt.hpp>

#include "core/nn.hpp"
#include "kernels/sleef_isa.hpp"
#include "kernels/threads.hpp"

namespace attn {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();


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

float exp_shift_sum(float* x, std::size_t n, float shift) {
  return exp_shift_sum_with(best_vector_isa(), x, n, shift);
}
float row_max(const float* x, std::size_t n, float init) { return max_with(best_vector_isa(), x, n, init); }

}  // namespace

VectorIsa best_vector_isa() {
  // A function-local static: asked once, when first needed (the CPU model is known by then).
  static const VectorIsa best = [] {
    if (__builtin_cpu_supports("avx512f")) return VectorIsa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::Avx2;
    return VectorIsa::Scalar;
  }();
  return best;
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
      const std::size_t kvh = s.kv_head(h);
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

void causal_attention_unfused(const AttentionShape& s, const AttentionIO& io, unsigned threads) {
  const std::size_t T = s.tokens, hd = s.head_dim, BH = s.batch * s.heads;
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(hd)));
  std::vector<float> scores(BH * T * T);  // (B, heads, T, T)
  for (std::size_t bh = 0; bh < BH; ++bh) {
    const std::size_t b = bh / s.heads, h = bh % s.heads, kvh = s.kv_head(h);
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
    const std::size_t b = bh / s.heads, h = bh % s.heads, kvh = s.kv_head(h);
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
