#pragma once
// The attention modules of chapter 3 as C++ types, shared by the lessons, the tests and the benchmark.
// Each constructor draws its parameters from a TorchGenerator in the order the book's __init__ does,
// so a module built after gen.manual_seed(s) holds the same numbers as PyTorch's after
// torch.manual_seed(s).
#include <cstddef>

#include "core/nn.hpp"
#include "core/tensor.hpp"
#include "core/torch_random.hpp"

namespace attn {

// Scaled dot-product attention of one sequence, unmasked: softmax(q @ k.T / sqrt(d_k)) @ v.
struct AttentionResult {
  Matrix attn_scores;   // (num_tokens, num_tokens)
  Matrix attn_weights;  // (num_tokens, num_tokens)
  Matrix context_vec;   // (num_tokens, d_out)
};
AttentionResult scaled_dot_product(const Matrix& queries, const Matrix& keys, const Matrix& values);

// 3.4.2: weights as plain nn.Parameter(torch.rand(d_in, d_out)), drawn W_query, W_key, W_value.
struct SelfAttention_v1 {
  SelfAttention_v1(std::size_t d_in, std::size_t d_out, TorchGenerator& gen);
  Matrix forward(const Matrix& x) const;  // (num_tokens, d_in) -> (num_tokens, d_out)

  Matrix W_query;  // (d_in, d_out)
  Matrix W_key;    // (d_in, d_out)
  Matrix W_value;  // (d_in, d_out)
};

// 3.4.2: the same with nn.Linear layers (PyTorch's init, optional bias).
struct SelfAttention_v2 {
  SelfAttention_v2(std::size_t d_in, std::size_t d_out, bool qkv_bias, TorchGenerator& gen);
  AttentionResult attend(const Matrix& x) const;  // every intermediate of forward
  Matrix forward(const Matrix& x) const;          // (num_tokens, d_in) -> (num_tokens, d_out)

  Linear W_query;
  Linear W_key;
  Linear W_value;
};

}  // namespace attn
