#pragma once
// The torch.nn pieces chapter 3 uses: nn.Linear (with PyTorch's init), softmax, matrix products
// through xtensor-blas / OpenBLAS, and dropout in training mode.
#include <cstddef>
#include <utility>

#include "core/tensor.hpp"
#include "core/torch_random.hpp"

namespace attn {

// The products are the BLAS calls PyTorch's CPU kernels make (Debian's PyTorch uses the same
// OpenBLAS), so results agree with PyTorch to the bit, not just to rounding:
// a @ b: (m, k) @ (k, n) -> (m, n), one SGEMM. With transpose_b, a @ b.T: (m, k) @ (n, k).T -> (m, n).
Matrix matmul(const Matrix& a, const Matrix& b, bool transpose_b = false);
// v @ b: (k,) @ (k, n) -> (n,). PyTorch computes it as v.unsqueeze(0).mm(b): an SGEMM of one row.
Vector matvec(const Vector& v, const Matrix& b, bool transpose_b = false);
// torch.dot(x, y) on n floats with strides, as BLAS SDOT.
float dot(std::size_t n, const float* x, std::size_t incx, const float* y, std::size_t incy);
inline float dot(const Vector& x, const Vector& y) { return dot(x.size(), x.data(), 1, y.data(), 1); }

// a @ b for stacks of matrices: (B, m, k) @ (B, k, n) -> (B, m, n), or with transpose_b
// (B, m, k) @ (B, n, k).transpose(1, 2). Like PyTorch's bmm: products of fewer than 400 multiply-adds
// per matrix are summed in a plain loop (k ascending, in float), larger ones are one SGEMM per matrix.
Tensor3 bmm(const Tensor3& a, const Tensor3& b, bool transpose_b = false);
// One matrix of that product on strided rows: c (m, n) = a (m, k) @ b (k, n), or @ b.T with b (n, k); the loop
// below 400 multiply-adds, SGEMM (beta 0) above. bmm's, and the unfused kernel's per head.
void batch_matrix_product(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
                          const float* b, std::size_t ldb, bool transpose_b, float* c, std::size_t ldc);

// torch.exp and torch.tanh on one float, to the bit.
float torch_exp(float x);
float torch_tanh(float x);

// max(init, x[0..n)) as PyTorch's max and maximum take it: NaN if any value (or init) is NaN, otherwise the
// largest (of equal ones the first, as std::max keeps it). The softmax's row maximum and tensor.max().
float max_propagating_nan(const float* x, std::size_t n, float init);
// tensor.max() of a non-empty tensor: NaN if it holds a NaN.
float max_of(const AnyTensor& x);

// torch.softmax(x, dim=-1): subtract the row maximum, exponentiate, multiply by 1 / sum. A row holding
// NaN or +inf, or entirely -inf, comes out all NaN, as in PyTorch.
Vector softmax(const Vector& x);  // (n,) -> (n,)
Matrix softmax(const Matrix& x);  // (rows, n) -> (rows, n), each row separately
// The same over the last dimension of a tensor of any rank (>= 1).
AnyTensor softmax_last(const AnyTensor& x);

// torch.triu(torch.ones(n, n), diagonal=1): 1 above the diagonal, where a token would see the future.
Matrix causal_mask(std::size_t n);  // (n, n)
// Rows [from, from + rows) and columns [0, keys) of causal_mask(n) for any n past them, built directly (a
// KV-cache call's slice self.mask[ptr:ptr + num_tokens_Q, :num_tokens_K]): 1 where the key comes after the
// query's position.
Matrix causal_mask_rows(std::size_t from, std::size_t rows, std::size_t keys);  // (rows, keys)
// x.masked_fill(mask.bool(), -inf) over the last two dimensions of x, whose sizes are (n, n).
AnyTensor mask_future(const AnyTensor& x);

// nn.Dropout(p) in training mode applied to x: draws its mask from gen (see TorchGenerator), then
// x * mask. p == 0 returns x without drawing.
AnyTensor dropout(const AnyTensor& x, double p, TorchGenerator& gen, DropoutRng rng);
// The book's softmax_naive: exp(x) / exp(x).sum(), which overflows for large scores.
Vector softmax_naive(const Vector& x);  // (n,) -> (n,)

// tensor.sum() / .sum(dim=-1) over n contiguous floats, added in the order of PyTorch's CPU reduction
// (at::native's cascade_sum as its AVX2 kernels run it: four accumulators of scalars below 8 floats, of
// 8-lane vectors from 8 on, levels of partial sums for long rows): bit-exact at any length.
float sum_of(const float* x, std::size_t n);
// The sum a softmax divides by, added in PyTorch's order (vec::reduce_all of its AVX2 kernels, 8 lanes: in
// order below 8 numbers; else the vectors lane by lane, the leftovers into the first lanes, then the lanes
// paired 4, 2 and 1 apart, as its shuffles do), over a row of n exps whose first `visible` are e[0..visible)
// and the rest 0 (the exps of masked scores, -inf).
float softmax_sum(const float* e, std::size_t visible, std::size_t n);
float sum_of(const Vector& x);
Vector row_sums(const Matrix& x);  // (rows, n) -> (rows,)

// nn.Linear(in_features, out_features, bias): weight (out, in) drawn first by kaiming_uniform_(a=sqrt(5)),
// then the bias from U(-1/sqrt(in), 1/sqrt(in)).
struct Linear {
  Linear(std::size_t in_features, std::size_t out_features, bool bias, TorchGenerator& gen);
  // A layer holding given parameters (a pretrained model's): weight (out, in), bias (out,) or (0,).
  Linear(Matrix weight_, Vector bias_) : weight(std::move(weight_)), bias(std::move(bias_)) {}

  Matrix forward(const Matrix& x) const;   // (n, in) -> (n, out): x @ weight.T + bias
  Tensor3 forward(const Tensor3& x) const;  // (b, n, in) -> (b, n, out), as one (b*n, in) product

  std::size_t num_parameters() const { return weight.size() + bias.size(); }

  Matrix weight;  // (out_features, in_features)
  Vector bias;    // (out_features,), or (0,) without a bias
};

// Chapter 4's LayerNorm over the last dimension: (x - mean) / sqrt(var + eps) * scale + shift, with the
// biased variance (unbiased=False), as GPT-2 was trained.
Matrix layer_norm(const Matrix& x, const Vector& scale, const Vector& shift, float eps);  // (n, d) -> (n, d)
// Chapter 4's GELU, GPT-2's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Matrix gelu(const Matrix& x);  // any shape, elementwise
void gelu_in_place(float* x, std::size_t n);  // the same on n contiguous floats

}  // namespace attn
