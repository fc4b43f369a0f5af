#include "lessons/multi_head.hpp"

namespace attn {

MultiHeadSteps::MultiHeadSteps(Trace& t, Node<Tensor3> x, Node<Linear> W_query, Node<Linear> W_key,
                               Node<Linear> W_value, Node<Linear> out_proj, std::size_t heads, std::size_t kv,
                               double dropout_p, State<TorchGenerator> gen, DropoutRng rng)
    : num_heads(heads),
      kv_heads(kv),
      head_dim(W_query->weight.shape(0) / heads),
      queries_proj(t.lazy<Tensor3>(apply_linear, W_query, x)),
      keys_proj(t.lazy<Tensor3>(apply_linear, W_key, x)),
      values_proj(t.lazy<Tensor3>(apply_linear, W_value, x)),
      queries(t.lazy<Tensor4>(split_heads, queries_proj, num_heads, head_dim)),
      keys(t.lazy<Tensor4>(split_heads, keys_proj, kv_heads, head_dim)),
      values(t.lazy<Tensor4>(split_heads, values_proj, kv_heads, head_dim)),
      keys_repeated(t.lazy<Tensor4>(repeat_kv_heads, keys, num_heads)),
      values_repeated(t.lazy<Tensor4>(repeat_kv_heads, values, num_heads)),
      attn_scores(t.lazy<AnyTensor>(head_scores, queries, keys_repeated)),
      masked(t.lazy<AnyTensor>(mask_future, attn_scores)),
      attn_weights(t.lazy<AnyTensor>(head_weights, masked, head_dim)),
      attn_weights_dropout(t.lazy<AnyTensor>(dropout, attn_weights, dropout_p, gen, rng)),
      context_heads(t.lazy<Tensor4>(head_context, attn_weights_dropout, values_repeated)),
      context_combined(t.lazy<Tensor3>(combine_heads, context_heads)),
      context_vecs(t.lazy<Tensor3>(apply_linear, out_proj, context_combined)) {}

}  // namespace attn
