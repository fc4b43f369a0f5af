#include "lessons/multi_head.hpp"

namespace attn {

MultiHeadSteps::MultiHeadSteps(Trace& t, const Lazy<Tensor3>& x, const Linear& W_query, const Linear& W_key,
                               const Linear& W_value, const Linear& out_proj, std::size_t heads, std::size_t kv,
                               double dropout_p, TorchGenerator& gen, DropoutRng rng)
    : num_heads(heads),
      kv_heads(kv),
      head_dim(W_query.weight.shape(0) / heads),
      // Pointers, not references, are captured: the lambdas outlive this constructor's parameters.
      queries_proj(t.lazy<Tensor3>([x = &x, W = &W_query] { return W->forward((*x)()); })),
      keys_proj(t.lazy<Tensor3>([x = &x, W = &W_key] { return W->forward((*x)()); })),
      values_proj(t.lazy<Tensor3>([x = &x, W = &W_value] { return W->forward((*x)()); })),
      queries(t.lazy<Tensor4>([this] { return split_heads(queries_proj(), num_heads, head_dim); })),
      keys(t.lazy<Tensor4>([this] { return split_heads(keys_proj(), kv_heads, head_dim); })),
      values(t.lazy<Tensor4>([this] { return split_heads(values_proj(), kv_heads, head_dim); })),
      keys_repeated(t.lazy<Tensor4>([this] { return repeat_kv_heads(keys(), num_heads); })),
      values_repeated(t.lazy<Tensor4>([this] { return repeat_kv_heads(values(), num_heads); })),
      attn_scores(t.lazy<AnyTensor>([this] { return head_scores(queries(), keys_repeated()); })),
      masked(t.lazy<AnyTensor>([this] { return mask_future(attn_scores()); })),
      attn_weights(t.lazy<AnyTensor>([this] { return head_weights(masked(), head_dim); })),
      attn_weights_dropout(t.lazy<AnyTensor>([this, dropout_p, gen = &gen, rng] {
        return dropout(attn_weights(), dropout_p, *gen, rng);
      })),
      context_heads(t.lazy<Tensor4>([this] { return head_context(attn_weights_dropout(), values_repeated()); })),
      context_combined(t.lazy<Tensor3>([this] { return combine_heads(context_heads()); })),
      context_vecs(t.lazy<Tensor3>([this, W = &out_proj] { return W->forward(context_combined()); })) {}

}  // namespace attn
