#include "modules/attention.hpp"

#include <cmath>

#include <algorithm>
#include <limits>

#include "kernels/kernels.hpp"

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

namespace attn {

namespace {

float inv_scale_divisor(std::size_t d_k) {
  // attn_scores / keys.shape[-1]**0.5: a Python float, used as a float32 divisor.
  return static_cast<float>(std::sqrt(static_cast<double>(d_k)));
}

AnyTensor divide(const AnyTensor& x, float divisor) {
  AnyTensor out = x / divisor;
  return out;
}

}  // namespace

// (b, n, heads * hd) -> view (b, n, heads, hd) -> transpose(1, 2) -> (b, heads, n, hd), materialised.
Tensor4 split_heads(const Tensor3& x, std::size_t heads, std::size_t head_dim) {
  const std::size_t b = x.shape(0), n = x.shape(1);
  const auto view = xt::reshape_view(x, {b, n, heads, head_dim});  // (b, n, heads, hd)
  Tensor4 out = xt::transpose(view, {0, 2, 1, 3});                  // (b, heads, n, hd)
  return out;
}

namespace {

// (B, h, r, c) -> (B*h, r, c) and back: how matmul hands 4-d operands to bmm.
Tensor3 fold(const Tensor4& x) {
  Tensor3 out = xt::reshape_view(x, {x.shape(0) * x.shape(1), x.shape(2), x.shape(3)});
  return out;
}
Tensor4 unfold(const Tensor3& x, std::size_t b) {
  Tensor4 out = xt::reshape_view(x, {b, x.shape(0) / b, x.shape(1), x.shape(2)});
  return out;
}

}  // namespace

CausalAttention::CausalAttention(std::size_t d_in, std::size_t d_out, double dropout_p, bool qkv_bias,
                                 TorchGenerator& gen)
    : W_query(d_in, d_out, qkv_bias, gen),
      W_key(d_in, d_out, qkv_bias, gen),
      W_value(d_in, d_out, qkv_bias, gen),
      dropout(dropout_p) {}

CausalAttention::Pass CausalAttention::attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const {
  Pass p;
  p.keys = W_key.forward(x);      // (b, n, d_out)
  p.queries = W_query.forward(x);  // (b, n, d_out)
  p.values = W_value.forward(x);   // (b, n, d_out)
  const Tensor3 scores = bmm(p.queries, p.keys, /*transpose_b=*/true);  // (b, n, n)
  p.attn_scores = mask_future(scores);                                   // (b, n, n)
  const AnyTensor weights = softmax_last(divide(p.attn_scores, inv_scale_divisor(p.keys.shape(2))));  // (b, n, n)
  p.attn_weights = attn::dropout(weights, dropout, gen, rng);                                         // (b, n, n)
  const Tensor3 w = p.attn_weights;
  p.context_vec = bmm(w, p.values);  // (b, n, d_out)
  return p;
}

Tensor3 CausalAttention::forward(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const {
  return attend(x, gen, rng).context_vec;
}

std::size_t CausalAttention::num_parameters() const {
  return W_query.num_parameters() + W_key.num_parameters() + W_value.num_parameters();
}

MultiHeadAttentionWrapper::MultiHeadAttentionWrapper(std::size_t d_in, std::size_t d_out, double dropout,
                                                     std::size_t num_heads, bool qkv_bias, TorchGenerator& gen) {
  heads.reserve(num_heads);
  for (std::size_t h = 0; h < num_heads; ++h) heads.emplace_back(d_in, d_out, dropout, qkv_bias, gen);
}

std::vector<CausalAttention::Pass> MultiHeadAttentionWrapper::attend(const Tensor3& x, TorchGenerator& gen,
                                                                     DropoutRng rng) const {
  std::vector<CausalAttention::Pass> passes;
  for (const auto& head : heads) passes.push_back(head.attend(x, gen, rng));
  return passes;
}

Tensor3 MultiHeadAttentionWrapper::forward(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const {
  return concat(attend(x, gen, rng));
}

Tensor3 MultiHeadAttentionWrapper::concat(const std::vector<CausalAttention::Pass>& passes) {
  const Tensor3& first = passes.front().context_vec;  // (b, n, d_out)
  const std::size_t b = first.shape(0), n = first.shape(1), d_out = first.shape(2);
  Tensor3 out = xt::empty<float>({b, n, d_out * passes.size()});  // (b, n, num_heads * d_out)
  for (std::size_t h = 0; h < passes.size(); ++h)
    xt::view(out, xt::all(), xt::all(), xt::range(h * d_out, (h + 1) * d_out)) = passes[h].context_vec;
  return out;
}

std::size_t MultiHeadAttentionWrapper::num_parameters() const {
  std::size_t total = 0;
  for (const auto& h : heads) total += h.num_parameters();
  return total;
}

Tensor4 repeat_kv_heads(const Tensor4& x, std::size_t num_heads) {
  // repeat_interleave(group_size, dim=1): query head i reads key/value head i / group_size.
  const std::size_t b = x.shape(0), kv_heads = x.shape(1), n = x.shape(2), head_dim = x.shape(3);
  const std::size_t group_size = num_heads / kv_heads;
  Tensor4 out = xt::empty<float>({b, num_heads, n, head_dim});  // (b, h, n, hd)
  for (std::size_t h = 0; h < num_heads; ++h) xt::view(out, xt::all(), h) = xt::view(x, xt::all(), h / group_size);
  return out;
}

AnyTensor head_scores(const Tensor4& queries, const Tensor4& keys) {
  const Tensor3 scores = bmm(fold(queries), fold(keys), /*transpose_b=*/true);  // (b*h, n, n)
  return unfold(scores, queries.shape(0));                                       // (b, h, n, n)
}

AnyTensor head_weights(const AnyTensor& masked, std::size_t head_dim) {
  return softmax_last(divide(masked, inv_scale_divisor(head_dim)));  // (b, h, n, n)
}

Tensor4 head_context(const AnyTensor& weights, const Tensor4& values) {
  const Tensor4 w = weights;                                             // (b, h, n, n)
  const Tensor3 context = bmm(fold(w), fold(values));                    // (b*h, n, hd)
  return xt::transpose(unfold(context, values.shape(0)), {0, 2, 1, 3});  // (b, n, h, hd)
}

Tensor3 combine_heads(const Tensor4& context_heads) {
  const std::size_t b = context_heads.shape(0), n = context_heads.shape(1);
  return xt::reshape_view(context_heads, {b, n, context_heads.shape(2) * context_heads.shape(3)});  // (b, n, d_out)
}

Tensor4 view_heads(const Tensor3& x, std::size_t heads, std::size_t head_dim) {
  return xt::reshape_view(x, {x.shape(0), x.shape(1), heads, head_dim});  // (b, n, heads, hd)
}

Tensor4 cat_tokens(const Tensor4& cache, const Tensor4& fresh) {
  const std::size_t t = cache.shape(1), n = fresh.shape(1);
  Tensor4 out = xt::empty<float>({cache.shape(0), t + n, cache.shape(2), cache.shape(3)});  // (b, t + n, kv, hd)
  xt::view(out, xt::all(), xt::range(0, t)) = cache;
  xt::view(out, xt::all(), xt::range(t, t + n)) = fresh;
  return out;
}

Tensor4 heads_first(const Tensor4& x) { return xt::transpose(x, {0, 2, 1, 3}); }

AnyTensor masked_where(const AnyTensor& scores, const Matrix& mask) {
  AnyTensor out = scores;
  const std::size_t rows = mask.shape(0), keys = mask.shape(1);
  for (std::size_t r = 0; r < out.size() / keys; ++r)
    for (std::size_t j = 0; j < keys; ++j)
      if (mask(r % rows, j) != 0.0f) out.data()[r * keys + j] = -std::numeric_limits<float>::infinity();
  return out;
}

void multi_head_attend(MultiHeadPass& p, std::size_t num_heads, std::size_t kv_heads, std::size_t head_dim,
                       double dropout_p, TorchGenerator& gen, DropoutRng rng) {
  p.queries = split_heads(p.queries_proj, num_heads, head_dim);  // (b, h, n, hd)
  p.keys = split_heads(p.keys_proj, kv_heads, head_dim);         // (b, kv, n, hd)
  p.values = split_heads(p.values_proj, kv_heads, head_dim);     // (b, kv, n, hd)
  p.keys_repeated = repeat_kv_heads(p.keys, num_heads);          // (b, h, n, hd)
  p.values_repeated = repeat_kv_heads(p.values, num_heads);      // (b, h, n, hd)
  p.attn_scores = head_scores(p.queries, p.keys_repeated);       // (b, h, n, n)
  p.masked = mask_future(p.attn_scores);                         // (b, h, n, n)
  p.attn_weights = head_weights(p.masked, head_dim);             // (b, h, n, n)
  p.attn_weights_dropout = dropout(p.attn_weights, dropout_p, gen, rng);  // (b, h, n, n)
  p.context_heads = head_context(p.attn_weights_dropout, p.values_repeated);  // (b, n, h, hd)
  p.context_combined = combine_heads(p.context_heads);                       // (b, n, d_out)
}

MultiHeadAttention::MultiHeadAttention(std::size_t d_in, std::size_t d_out, double dropout_p, std::size_t heads,
                                       bool qkv_bias, TorchGenerator& gen)
    : num_heads(heads),
      head_dim(d_out / heads),
      W_query(d_in, d_out, qkv_bias, gen),
      W_key(d_in, d_out, qkv_bias, gen),
      W_value(d_in, d_out, qkv_bias, gen),
      out_proj(d_out, d_out, /*bias=*/true, gen),
      dropout(dropout_p) {}

MultiHeadPass MultiHeadAttention::attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const {
  return attend(x, gen, rng, dropout);
}

MultiHeadPass MultiHeadAttention::attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng, double dropout_p) const {
  MultiHeadPass p;
  p.keys_proj = W_key.forward(x);      // (b, n, d_out)
  p.queries_proj = W_query.forward(x);  // (b, n, d_out)
  p.values_proj = W_value.forward(x);   // (b, n, d_out)
  multi_head_attend(p, num_heads, num_heads, head_dim, dropout_p, gen, rng);
  p.context_vecs = out_proj.forward(p.context_combined);  // (b, n, d_out)
  return p;
}

Tensor3 MultiHeadAttention::forward(const Tensor3& x, TorchGenerator& gen, DropoutRng rng, unsigned threads) const {
  if (dropout > 0.0) return attend(x, gen, rng).context_vecs;
  const std::size_t b = x.shape(0), n = x.shape(1), d_out = num_heads * head_dim;
  const Tensor3 keys = W_key.forward(x);      // (b, n, d_out)
  const Tensor3 queries = W_query.forward(x);  // (b, n, d_out)
  const Tensor3 values = W_value.forward(x);   // (b, n, d_out)
  Tensor3 context = xt::empty<float>({b, n, d_out});  // (b, n, d_out): heads concatenated
  causal_attention_unfused({b, n, num_heads, num_heads, head_dim},
                           {queries.data(), d_out, keys.data(), d_out, values.data(), d_out, context.data(), d_out},
                           threads);
  return out_proj.forward(context);  // (b, n, d_out)
}

std::size_t MultiHeadAttention::num_parameters() const {
  return W_query.num_parameters() + W_key.num_parameters() + W_value.num_parameters() + out_proj.num_parameters();
}

GroupedQueryAttention::GroupedQueryAttention(std::size_t d_in, std::size_t d_out, double dropout_p,
                                             std::size_t heads, std::size_t kv_groups, bool qkv_bias,
                                             TorchGenerator& gen)
    : num_heads(heads),
      num_kv_groups(kv_groups),
      head_dim(d_out / heads),
      W_key(d_in, kv_groups * (d_out / heads), qkv_bias, gen),
      W_value(d_in, kv_groups * (d_out / heads), qkv_bias, gen),
      W_query(d_in, d_out, qkv_bias, gen),
      out_proj(d_out, d_out, /*bias=*/false, gen),
      dropout(dropout_p) {}

MultiHeadPass GroupedQueryAttention::attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const {
  MultiHeadPass p;
  p.queries_proj = W_query.forward(x);  // (b, n, d_out)
  p.keys_proj = W_key.forward(x);       // (b, n, kv * hd)
  p.values_proj = W_value.forward(x);   // (b, n, kv * hd)
  multi_head_attend(p, num_heads, num_kv_groups, head_dim, dropout, gen, rng);
  p.context_vecs = out_proj.forward(p.context_combined);  // (b, n, d_out)
  return p;
}

std::size_t GroupedQueryAttention::num_parameters() const {
  return W_key.num_parameters() + W_value.num_parameters() + W_query.num_parameters() + out_proj.num_parameters();
}

}  // namespace attn
