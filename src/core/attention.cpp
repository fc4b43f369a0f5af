#include "core/attention.hpp"

#include <cmath>

namespace attn {

AttentionResult scaled_dot_product(const Matrix& queries, const Matrix& keys, const Matrix& values) {
  AttentionResult r;
  r.attn_scores = matmul(queries, keys, /*transpose_b=*/true);  // (num_tokens, num_tokens)
  // keys.shape[-1]**0.5 is a Python float; dividing a float32 tensor by it divides by that float.
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(keys.shape(1))));
  Matrix scaled = r.attn_scores / scale;       // (num_tokens, num_tokens)
  r.attn_weights = softmax(scaled);            // (num_tokens, num_tokens)
  r.context_vec = matmul(r.attn_weights, values);  // (num_tokens, d_out)
  return r;
}

SelfAttention_v1::SelfAttention_v1(std::size_t d_in, std::size_t d_out, TorchGenerator& gen)
    : W_query(gen.rand(d_in, d_out)), W_key(gen.rand(d_in, d_out)), W_value(gen.rand(d_in, d_out)) {}

Matrix SelfAttention_v1::forward(const Matrix& x) const {
  const Matrix keys = matmul(x, W_key);      // (num_tokens, d_out)
  const Matrix queries = matmul(x, W_query);  // (num_tokens, d_out)
  const Matrix values = matmul(x, W_value);   // (num_tokens, d_out)
  return scaled_dot_product(queries, keys, values).context_vec;
}

SelfAttention_v2::SelfAttention_v2(std::size_t d_in, std::size_t d_out, bool qkv_bias, TorchGenerator& gen)
    : W_query(d_in, d_out, qkv_bias, gen), W_key(d_in, d_out, qkv_bias, gen), W_value(d_in, d_out, qkv_bias, gen) {}

AttentionResult SelfAttention_v2::attend(const Matrix& x) const {
  const Matrix keys = W_key.forward(x);      // (num_tokens, d_out)
  const Matrix queries = W_query.forward(x);  // (num_tokens, d_out)
  const Matrix values = W_value.forward(x);   // (num_tokens, d_out)
  return scaled_dot_product(queries, keys, values);
}

Matrix SelfAttention_v2::forward(const Matrix& x) const { return attend(x).context_vec; }

}  // namespace attn
