#pragma once
// The multi-head forward pass that `attn mha` and `attn gqa` show, intermediate by intermediate, as Lazy
// values of the lesson's trace: asking for the scores computes the projections and the scores, not the
// softmax or the output. Each value is the same call multi_head_attend (modules/attention.cpp) makes, so
// the lessons give the module's numbers to the bit.
#include <cstddef>

#include "modules/attention.hpp"
#include "trace/trace.hpp"

namespace attn {

struct MultiHeadSteps {
  // x: (b, num_tokens, d_in). W_key and W_value project to kv_heads * head_dim (kv_heads == num_heads for
  // MHA). Dropout draws from gen when attn_weights_dropout is first read.
  MultiHeadSteps(Trace& t, const Lazy<Tensor3>& x, const Linear& W_query, const Linear& W_key,
                 const Linear& W_value, const Linear& out_proj, std::size_t num_heads, std::size_t kv_heads,
                 double dropout_p, TorchGenerator& gen, DropoutRng rng);
  MultiHeadSteps(const MultiHeadSteps&) = delete;

  const std::size_t num_heads, kv_heads, head_dim;
  Lazy<Tensor3> queries_proj;             // (b, num_tokens, d_out): W_query(x)
  Lazy<Tensor3> keys_proj, values_proj;   // (b, num_tokens, kv_heads * head_dim)
  Lazy<Tensor4> queries;                  // (b, num_heads, num_tokens, head_dim)
  Lazy<Tensor4> keys, values;             // (b, kv_heads, num_tokens, head_dim)
  Lazy<Tensor4> keys_repeated, values_repeated;  // (b, num_heads, num_tokens, head_dim)
  Lazy<AnyTensor> attn_scores;            // (b, num_heads, num_tokens, num_tokens)
  Lazy<AnyTensor> masked;                 // the same with -inf above the diagonal
  Lazy<AnyTensor> attn_weights;           // softmax(masked / sqrt(head_dim))
  Lazy<AnyTensor> attn_weights_dropout;   // after dropout
  Lazy<Tensor4> context_heads;            // (b, num_tokens, num_heads, head_dim)
  Lazy<Tensor3> context_combined;         // (b, num_tokens, d_out)
  Lazy<Tensor3> context_vecs;             // (b, num_tokens, d_out): out_proj(context_combined)
};

}  // namespace attn
