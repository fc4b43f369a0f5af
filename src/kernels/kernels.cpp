#include "kernels/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include <cblas.h>
#include <xtensor/xadapt.hpp>

#include "core/nn.hpp"
#include "kernels/isa_builds.hpp"
#include "kernels/threads.hpp"

namespace attn {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The softmax steps of one build: the row maximum and the exps with their sum (max_with and
// exp_shift_sum_with in kernels.hpp say what each returns).
struct SoftmaxRows {
  float (*row_max)(const float* x, std::size_t n, float init);
  float (*exp_shift_sum)(float* x, std::size_t n, float shift);
};

ATTN_TARGET_AVX512
namespace avx512 {
using namespace isa::avx512;
#include "kernels/softmax_rows.inc"
}  // namespace avx512
ATTN_TARGET_END

ATTN_TARGET_AVX2
namespace avx2 {
using namespace isa::avx2;
#include "kernels/softmax_rows.inc"
}  // namespace avx2
ATTN_TARGET_END

// The scalar build, which the vector builds match: nn's maximum (the compiler does not vectorise it on its
// own) and the exps one at a time, summed in order.
float exp_shift_sum_scalar(float* x, std::size_t n, float shift) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = torch_exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}
const SoftmaxRows kScalarSoftmaxRows{max_propagating_nan, exp_shift_sum_scalar};

const SoftmaxRows& softmax_rows(VectorIsa isa) {
  return for_isa(isa, avx512::kSoftmaxRows, avx2::kSoftmaxRows, kScalarSoftmaxRows);
}

}  // namespace

float max_with(VectorIsa isa, const float* x, std::size_t n, float init) {
  return softmax_rows(isa).row_max(x, n, init);
}

float exp_shift_sum_with(VectorIsa isa, float* x, std::size_t n, float shift) {
  return softmax_rows(isa).exp_shift_sum(x, n, shift);
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
    // (PyTorch's bmm of one head: a plain loop for a small product, SGEMM otherwise)
    batch_matrix_product(T, T, hd, io.q + b * T * io.ldq + h * hd, io.ldq, io.k + b * T * io.ldk + kvh * hd, io.ldk,
                         /*transpose_b=*/true, scores.data() + bh * T * T, T);
  }
  // masked_fill(-inf), / sqrt(hd), softmax: row r is query r % T of its head.
  const std::size_t rows = BH * T;
  const SoftmaxRows& steps = softmax_rows(best_vector_isa());
  const auto softmax_rows = [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) {
      float* row = scores.data() + r * T;
      const std::size_t visible = r % T + 1;
      for (std::size_t j = 0; j < visible; ++j) row[j] /= scale;
      const float m = steps.row_max(row, visible, kNegInf);
      steps.exp_shift_sum(row, visible, m);
      // The sum in PyTorch's order over the whole row, the masked exps 0, as softmax over masked scores adds it.
      const float inv = 1.0f / softmax_sum(row, visible, T);
      for (std::size_t j = 0; j < visible; ++j) row[j] *= inv;
      std::fill(row + visible, row + T, 0.0f);
    }
  };
  threads = std::max(1u, threads);
  on_threads(threads, [&](unsigned t) { softmax_rows(rows * t / threads, rows * (t + 1) / threads); });
  for (std::size_t bh = 0; bh < BH; ++bh) {
    const std::size_t b = bh / s.heads, h = bh % s.heads, kvh = s.kv_head(h);
    // context = attn_weights @ values, written straight into the head's columns of the output
    batch_matrix_product(T, hd, T, scores.data() + bh * T * T, T, io.v + b * T * io.ldv + kvh * hd, io.ldv,
                         /*transpose_b=*/false, io.out + b * T * io.ldo + h * hd, io.ldo);
  }
}

double causal_attention_flops(const AttentionShape& s) {
  const double pairs = static_cast<double>(s.tokens) * static_cast<double>(s.tokens + 1) / 2.0;
  return 2.0 * 2.0 * static_cast<double>(s.batch * s.heads * s.head_dim) * pairs;
}

}  // namespace attn
