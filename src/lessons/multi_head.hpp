#pragma once
// The multi-head forward pass that `attn mha` and `attn gqa` show, intermediate by intermediate, as lazy
// nodes of the lesson's trace: asking for the scores computes the projections and the scores, not the
// softmax or the output. Each value is the same call multi_head_attend (modules/attention.cpp) makes, so
// the lessons give the module's numbers to the bit.
#include <cstddef>

#include "modules/attention.hpp"
#include "trace/trace.hpp"

namespace attn {

// Handles into the trace: copyable, and valid until the trace resolves.
struct MultiHeadSteps {
  // x: (b, num_tokens, d_in). W_key and W_value project to kv_heads * head_dim (kv_heads == num_heads for
  // MHA). Dropout draws from gen when attn_weights_dropout is first read.
  MultiHeadSteps(Trace& t, Node<Tensor3> x, Node<Linear> W_query, Node<Linear> W_key, Node<Linear> W_value,
                 Node<Linear> out_proj, std::size_t num_heads, std::size_t kv_heads, double dropout_p,
                 State<TorchGenerator> gen, DropoutRng rng);

  std::size_t num_heads, kv_heads, head_dim;
  Node<Tensor3> queries_proj;             // (b, num_tokens, d_out): W_query(x)
  Node<Tensor3> keys_proj, values_proj;   // (b, num_tokens, kv_heads * head_dim)
  Node<Tensor4> queries;                  // (b, num_heads, num_tokens, head_dim)
  Node<Tensor4> keys, values;             // (b, kv_heads, num_tokens, head_dim)
  Node<Tensor4> keys_repeated, values_repeated;  // (b, num_heads, num_tokens, head_dim)
  Node<AnyTensor> attn_scores;            // (b, num_heads, num_tokens, num_tokens)
  Node<AnyTensor> masked;                 // the same with -inf above the diagonal
  Node<AnyTensor> attn_weights;           // softmax(masked / sqrt(head_dim))
  Node<AnyTensor> attn_weights_dropout;   // after dropout
  Node<Tensor4> context_heads;            // (b, num_tokens, num_heads, head_dim)
  Node<Tensor3> context_combined;         // (b, num_tokens, d_out)
  Node<Tensor3> context_vecs;             // (b, num_tokens, d_out): out_proj(context_combined)
};

// nn.Linear on a batch, as a computation of the trace: W(x), (b, num_tokens, in) -> (b, num_tokens, out).
inline Tensor3 apply_linear(const Linear& W, const Tensor3& x) { return W.forward(x); }

}  // namespace attn
