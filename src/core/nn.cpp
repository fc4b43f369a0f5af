#include "core/nn.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <sleef.h>
#include <xtensor-blas/xblas.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

// libsleef exports its FMA scalar functions on every x86-64 build; sleef.h declares them only when
// the including code is itself compiled for FMA (FP_FAST_FMA), which attn is not.
#ifndef FP_FAST_FMAF
extern "C" float Sleef_expf1_u10purecfma(float);
extern "C" float Sleef_tanhf1_u10purecfma(float);
#endif

namespace attn {

Matrix matmul(const Matrix& a, const Matrix& b, bool transpose_b) {
  const std::size_t m = a.shape(0);
  const std::size_t n = transpose_b ? b.shape(0) : b.shape(1);
  Matrix out = xt::empty<float>({m, n});  // (m, n): SGEMM with beta 0 writes every element
  xt::blas::gemm(a, b, out, false, transpose_b);
  return out;
}

Vector matvec(const Vector& v, const Matrix& b, bool transpose_b) {
  const Matrix row = xt::reshape_view(v, {std::size_t{1}, v.size()});  // (1, k)
  const Matrix out = matmul(row, b, transpose_b);                      // (1, n)
  return xt::flatten(out);                                             // (n,)
}

float dot(std::size_t n, const float* x, std::size_t incx, const float* y, std::size_t incy) {
  float result = 0.0f;
  cxxblas::dot<xt::blas_index_t>(static_cast<xt::blas_index_t>(n), x, static_cast<xt::blas_index_t>(incx), y,
                                 static_cast<xt::blas_index_t>(incy), result);
  return result;
}

void batch_matrix_product(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                          const float* b, std::size_t ldb, bool transpose_b, float* c, std::size_t ldc) {
  if (k * m * n < 400) {
    // at::native's baddbmm_cpu_kernel for small products: a plain float loop.
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (std::size_t p = 0; p < k; ++p) acc += a[i * lda + p] * (transpose_b ? b[j * ldb + p] : b[p * ldb + j]);
        c[i * ldc + j] = acc;
      }
    return;
  }
  using xt::blas_index_t;
  cxxblas::gemm<blas_index_t>(cxxblas::StorageOrder::RowMajor, cxxblas::Transpose::NoTrans,
                              transpose_b ? cxxblas::Transpose::Trans : cxxblas::Transpose::NoTrans,
                              static_cast<blas_index_t>(m), static_cast<blas_index_t>(n), static_cast<blas_index_t>(k),
                              1.0f, a, static_cast<blas_index_t>(lda), b, static_cast<blas_index_t>(ldb), 0.0f, c,
                              static_cast<blas_index_t>(ldc));
}

Tensor3 bmm(const Tensor3& a, const Tensor3& b, bool transpose_b) {
  const std::size_t batches = a.shape(0), m = a.shape(1), k = a.shape(2);
  const std::size_t n = transpose_b ? b.shape(1) : b.shape(2);
  Tensor3 out = xt::empty<float>({batches, m, n});  // (B, m, n): every element is written below
  for (std::size_t s = 0; s < batches; ++s)
    batch_matrix_product(m, n, k, a.data() + s * m * k, k, b.data() + s * b.shape(1) * b.shape(2), b.shape(2),
                         transpose_b, out.data() + s * m * n, n);
  return out;
}

float torch_exp(float x) {
  // PyTorch's vectorised exp is SLEEF's expf_u10, whose AVX2/AVX-512/NEON versions all use fused
  // multiply-adds; SLEEF's scalar purecfma build gives the same bits. (glibc's expf differs from it in
  // about one value in ten.) A CPU without FMA gets SLEEF's plain scalar version instead of a crash.
  static const bool has_fma = __builtin_cpu_supports("fma");
  return has_fma ? Sleef_expf1_u10purecfma(x) : Sleef_expf1_u10purec(x);
}

float max_propagating_nan(const float* x, std::size_t n, float init) {
  float m = init;
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] > m || std::isnan(x[i])) m = x[i];  // once NaN, nothing is greater: it stays
  return m;
}

float max_of(const AnyTensor& x) {
  return max_propagating_nan(x.data(), x.size(), -std::numeric_limits<float>::infinity());
}

namespace {

// One row of torch.softmax: max, exp(x - max), then scale by the reciprocal of the sum. As in PyTorch,
// a row holding NaN or +inf, or entirely -inf (scores that overflowed float32), becomes all NaN: x - max
// is NaN somewhere, so the sum is NaN and so is every weight. Nothing here refuses such a row.
void softmax_row(const float* x, float* out, std::size_t n) {
  const float max_value = max_propagating_nan(x, n, -std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < n; ++i) out[i] = torch_exp(x[i] - max_value);
  const float total = n == 0 ? 0.0f : softmax_sum(out, n, n);
  const float inv = 1.0f / total;
  for (std::size_t i = 0; i < n; ++i) out[i] *= inv;
}

}  // namespace

Vector softmax(const Vector& x) {
  Vector out = xt::empty<float>(x.shape());  // (n,)
  softmax_row(x.data(), out.data(), x.size());
  return out;
}

Matrix softmax(const Matrix& x) {
  Matrix out = xt::empty<float>(x.shape());  // (rows, n)
  const std::size_t n = x.shape(1);
  for (std::size_t r = 0; r < x.shape(0); ++r) softmax_row(x.data() + r * n, out.data() + r * n, n);
  return out;
}

AnyTensor softmax_last(const AnyTensor& x) {
  AnyTensor out = xt::empty<float>(x.shape());
  const std::size_t n = x.shape().back();
  for (std::size_t r = 0; r < x.size() / n; ++r) softmax_row(x.data() + r * n, out.data() + r * n, n);
  return out;
}

Matrix causal_mask(std::size_t n) { return causal_mask_rows(0, n, n); }

Matrix causal_mask_rows(std::size_t from, std::size_t rows, std::size_t keys) {
  Matrix mask = xt::zeros<float>({rows, keys});  // (rows, keys)
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = from + i + 1; j < keys; ++j) mask(i, j) = 1.0f;
  return mask;
}

AnyTensor mask_future(const AnyTensor& x) {
  AnyTensor out = x;
  const std::size_t n = x.shape().back();
  for (std::size_t r = 0; r < x.size() / n; ++r) {
    const std::size_t i = r % n;  // the query's position within its (n, n) matrix
    for (std::size_t j = i + 1; j < n; ++j) out.data()[r * n + j] = -std::numeric_limits<float>::infinity();
  }
  return out;
}

AnyTensor dropout(const AnyTensor& x, double p, TorchGenerator& gen, DropoutRng rng) {
  if (p == 0.0) return x;
  const std::vector<float> mask = gen.dropout_scale_mask(x.size(), p, rng);
  AnyTensor out = xt::empty<float>(x.shape());
  for (std::size_t i = 0; i < x.size(); ++i) out.data()[i] = x.data()[i] * mask[i];
  return out;
}

Vector softmax_naive(const Vector& x) {
  Vector e = xt::empty<float>(x.shape());  // (n,)
  std::transform(x.begin(), x.end(), e.begin(), torch_exp);
  const float total = sum_of(e);
  Vector out = e / total;  // (n,)
  return out;
}

namespace {

// at::native's sum of a contiguous row of floats (ReduceOps/SumKernel.cpp, PyTorch 1.13), written here
// because the order of the additions decides the last bit and no library adds in PyTorch's order. A row of
// at least kTorchLanes numbers is summed as vectors of that many lanes (Vectorized<float> of the AVX2
// kernels, which Debian's python3-torch runs on AVX2 and AVX-512 CPUs alike), lane by lane; the leftover
// numbers are added to 0 in order, then the lanes in order. A shorter row is summed as scalars. Either way
// the elements go to four interleaved accumulators (x0 + x4 + ..., x1 + x5 + ...), the leftovers to the
// first, then the other three added to it in order; long rows through up to four levels of partial sums.
constexpr std::size_t kTorchLanes = 8;

std::size_t ceil_log2(std::size_t x) {  // c10::utils::CeilLog2
  if (x <= 2) return 1;
  std::size_t bits = 0;
  for (std::size_t v = x - 1; v != 0; v >>= 1) ++bits;
  return bits;
}

// Sums `count` elements of L floats each, element i at x + i * L, into acc (L floats): multi_row_sum's
// cascade over rows of four elements, then row_sum's leftovers and the merge of its four accumulators.
template <std::size_t L>
void row_sum(const float* x, std::size_t count, float (&out)[L]) {
  constexpr std::size_t kLevels = 4, kIlp = 4;
  const std::size_t rows = count / kIlp;
  const std::size_t level_power = std::max<std::size_t>(4, ceil_log2(rows) / kLevels);
  const std::size_t level_step = std::size_t{1} << level_power, level_mask = level_step - 1;
  float acc[kLevels][kIlp][L] = {};
  const auto add_row = [&](std::size_t i) {
    for (std::size_t k = 0; k < kIlp; ++k)
      for (std::size_t l = 0; l < L; ++l) acc[0][k][l] += x[(i * kIlp + k) * L + l];
  };
  std::size_t i = 0;
  while (i + level_step <= rows) {
    for (std::size_t j = 0; j < level_step; ++j, ++i) add_row(i);
    for (std::size_t j = 1; j < kLevels; ++j) {
      for (std::size_t k = 0; k < kIlp; ++k)
        for (std::size_t l = 0; l < L; ++l) {
          acc[j][k][l] += acc[j - 1][k][l];
          acc[j - 1][k][l] = 0.0f;
        }
      if ((i & (level_mask << (j * level_power))) != 0) break;
    }
  }
  for (; i < rows; ++i) add_row(i);
  for (std::size_t j = 1; j < kLevels; ++j)
    for (std::size_t k = 0; k < kIlp; ++k)
      for (std::size_t l = 0; l < L; ++l) acc[0][k][l] += acc[j][k][l];
  for (std::size_t e = rows * kIlp; e < count; ++e)
    for (std::size_t l = 0; l < L; ++l) acc[0][0][l] += x[e * L + l];
  for (std::size_t k = 1; k < kIlp; ++k)
    for (std::size_t l = 0; l < L; ++l) acc[0][0][l] += acc[0][k][l];
  for (std::size_t l = 0; l < L; ++l) out[l] = acc[0][0][l];
}

}  // namespace

float softmax_sum(const float* e, std::size_t visible, std::size_t n) {
  // The masked exps are 0, and adding 0 to a sum of exps (never -0) changes nothing: only the visible ones
  // are added, each to the lane its position gives (leftovers go to the first lanes, which is the same).
  visible = std::min(visible, n);
  float acc[kTorchLanes] = {};
  if (n < kTorchLanes) {
    for (std::size_t i = 0; i < visible; ++i) acc[0] += e[i];
    return acc[0];
  }
  std::size_t i = 0;
  for (; i + kTorchLanes <= visible; i += kTorchLanes)
    for (std::size_t l = 0; l < kTorchLanes; ++l) acc[l] += e[i + l];
  for (; i < visible; ++i) acc[i % kTorchLanes] += e[i];
  for (std::size_t half = kTorchLanes / 2; half >= 1; half /= 2) {
    float next[kTorchLanes];
    for (std::size_t l = 0; l < kTorchLanes; ++l) next[l] = acc[l] + acc[l ^ half];
    std::copy(next, next + kTorchLanes, acc);
  }
  return acc[0];
}

float sum_of(const float* x, std::size_t n) {
  if (n < kTorchLanes) {
    float total[1];
    row_sum<1>(x, n, total);
    return total[0];
  }
  const std::size_t vectors = n / kTorchLanes;
  float lanes[kTorchLanes];
  row_sum<kTorchLanes>(x, vectors, lanes);
  float total = 0.0f;
  for (std::size_t i = vectors * kTorchLanes; i < n; ++i) total += x[i];
  for (float lane : lanes) total += lane;
  return total;
}

float sum_of(const Vector& x) { return sum_of(x.data(), x.size()); }

Vector row_sums(const Matrix& x) {
  const std::size_t n = x.shape(1);
  Vector out = xt::empty<float>({x.shape(0)});  // (rows,)
  for (std::size_t r = 0; r < x.shape(0); ++r) out(r) = sum_of(x.data() + r * n, n);
  return out;
}

Linear::Linear(std::size_t in_features, std::size_t out_features, bool with_bias, TorchGenerator& gen) {
  // torch.nn.init.kaiming_uniform_(weight, a=math.sqrt(5)), computed in double as Python does.
  const double a = std::sqrt(5.0);
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  const double std_dev = gain / std::sqrt(static_cast<double>(in_features));
  const double bound = std::sqrt(3.0) * std_dev;
  weight = xt::empty<float>({out_features, in_features});  // (out, in)
  gen.uniform(weight.data(), weight.size(), static_cast<float>(-bound), static_cast<float>(bound));
  bias = xt::zeros<float>({with_bias ? out_features : std::size_t{0}});  // (out,) or (0,)
  if (with_bias) {
    const double bias_bound = 1.0 / std::sqrt(static_cast<double>(in_features));
    gen.uniform(bias.data(), bias.size(), static_cast<float>(-bias_bound), static_cast<float>(bias_bound));
  }
}

namespace {

// x (rows, in) @ weight.T (+ bias) into out (rows, out_features), as at::linear computes it: with a bias,
// addmm(bias, x, weight.t()), the bias copied into every row and SGEMM adding the product to it (beta 1;
// some OpenBLAS kernels round that sum otherwise than a product and a separate addition); without, SGEMM
// with beta 0.
void addmm_rows(const float* x, std::size_t rows, std::size_t in, const Matrix& weight, const Vector& bias, float* out) {
  const std::size_t features = weight.shape(0);
  const bool with_bias = bias.size() > 0;
  if (with_bias)
    for (std::size_t r = 0; r < rows; ++r) std::copy(bias.begin(), bias.end(), out + r * features);
  using xt::blas_index_t;
  cxxblas::gemm<blas_index_t>(cxxblas::StorageOrder::RowMajor, cxxblas::Transpose::NoTrans, cxxblas::Transpose::Trans,
                              static_cast<blas_index_t>(rows), static_cast<blas_index_t>(features),
                              static_cast<blas_index_t>(in), 1.0f, x, static_cast<blas_index_t>(in), weight.data(),
                              static_cast<blas_index_t>(in), with_bias ? 1.0f : 0.0f, out,
                              static_cast<blas_index_t>(features));
}

}  // namespace

Tensor3 Linear::forward(const Tensor3& x) const {
  // PyTorch folds a contiguous (b, n, in) input into one (b*n, in) matrix product: the same SGEMM as the
  // 2-d forward, run on x's and the result's memory directly (no copies of batch-sized tensors).
  const std::size_t b = x.shape(0), n = x.shape(1), in = x.shape(2), out = weight.shape(0);
  Tensor3 result = xt::empty<float>({b, n, out});  // (b, n, out): the bias, or SGEMM with beta 0, writes it all
  addmm_rows(x.data(), b * n, in, weight, bias, result.data());
  return result;
}

Matrix Linear::forward(const Matrix& x) const {
  Matrix out = xt::empty<float>({x.shape(0), weight.shape(0)});  // (n, out)
  addmm_rows(x.data(), x.shape(0), x.shape(1), weight, bias, out.data());
  return out;
}

Matrix layer_norm(const Matrix& x, const Vector& scale, const Vector& shift, float eps) {
  const std::size_t n = x.shape(0), d = x.shape(1);
  Matrix out = xt::empty<float>({n, d});  // (n, d)
  for (std::size_t r = 0; r < n; ++r) {
    const float* row = &x(r, 0);
    const float mean = sum_of(row, d) / static_cast<float>(d);  // x.mean(dim=-1, keepdim=True)
    // x.var(dim=-1, unbiased=False): PyTorch's Welford update, in double, divided by d, then rounded.
    double running_mean = 0.0, m2 = 0.0;
    for (std::size_t c = 0; c < d; ++c) {
      const double v = row[c], delta = v - running_mean;
      running_mean += delta / static_cast<double>(c + 1);
      m2 += delta * (v - running_mean);
    }
    const float var = static_cast<float>(m2 / static_cast<double>(d));
    const float denominator = std::sqrt(var + eps);
    for (std::size_t c = 0; c < d; ++c) out(r, c) = scale(c) * ((row[c] - mean) / denominator) + shift(c);
  }
  return out;
}

float torch_tanh(float x) {
  // torch.tanh is SLEEF's tanhf_u10 in PyTorch's vector kernels, as torch.exp is its expf_u10 (torch_exp),
  // for every element: a tensor's last elements too (checked against PyTorch 1.13 where glibc's tanhf and
  // SLEEF's differ).
  static const bool has_fma = __builtin_cpu_supports("fma");
  return has_fma ? Sleef_tanhf1_u10purecfma(x) : Sleef_tanhf1_u10purec(x);
}

void gelu_in_place(float* x, std::size_t n) {
  const float k = std::sqrt(static_cast<float>(2.0 / M_PI));  // torch.sqrt(torch.tensor(2.0 / torch.pi))
  // torch.pow(x, 3) is x * x * x; each operation rounds to float, none fused.
  for (std::size_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float inner = k * (v + 0.044715f * (v * v * v));
    x[i] = 0.5f * v * (1.0f + torch_tanh(inner));
  }
}

Matrix gelu(const Matrix& x) {
  Matrix out = x;  // (n, d)
  gelu_in_place(out.data(), out.size());
  return out;
}

}  // namespace attn
