#pragma once
// The attention modules of chapter 3 as C++ types, shared by the lessons, the tests and the benchmark.
// Each constructor draws its parameters from a TorchGenerator in the order the book's __init__ does,
// so a module built after gen.manual_seed(s) holds the same numbers as PyTorch's after
// torch.manual_seed(s).
#include <cstddef>
#include <vector>

#include "core/limits.hpp"
#include "core/nn.hpp"
#include "core/tensor.hpp"
#include "core/torch_random.hpp"
#include "kernels/kernels.hpp"

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
  // The numbers forward (v1's or v2's) makes on the way, all freed when it returns: queries, keys,
  // values and the output, and scaled_dot_product's scores, scaled scores and weights, held at once.
  // For the memory budget, from the shapes alone.
  static std::size_t forward_numbers(std::size_t num_tokens, std::size_t d_out) {
    return saturating_product({num_tokens, saturating_sum(saturating_product({4, d_out}),
                                                          saturating_product({3, num_tokens}))});
  }

  Linear W_query;
  Linear W_key;
  Linear W_value;
};

// 3.5.3: causal (masked) attention over a batch, with dropout on the attention weights.
struct CausalAttention {
  CausalAttention(std::size_t d_in, std::size_t d_out, double dropout, bool qkv_bias, TorchGenerator& gen);

  // Every intermediate of one forward pass over x (b, num_tokens, d_in).
  struct Pass {
    Tensor3 keys;          // (b, num_tokens, d_out)
    Tensor3 queries;       // (b, num_tokens, d_out)
    Tensor3 values;        // (b, num_tokens, d_out)
    AnyTensor attn_scores;   // (b, num_tokens, num_tokens), -inf above the diagonal
    AnyTensor attn_weights;  // (b, num_tokens, num_tokens), after softmax and dropout
    Tensor3 context_vec;     // (b, num_tokens, d_out)
  };
  // Dropout draws from gen, as the module's forward draws from PyTorch's global generator.
  Pass attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const;
  Tensor3 forward(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const;
  std::size_t num_parameters() const;
  // The numbers a Pass holds, with the softmax's input and the dropout mask made on the way: for the
  // memory budget, from the shapes alone.
  static std::size_t pass_numbers(std::size_t b, std::size_t num_tokens, std::size_t d_out) {
    return saturating_product({b, num_tokens, saturating_sum(saturating_product({4, d_out}),
                                                             saturating_product({4, num_tokens}))});
  }

  Linear W_query;
  Linear W_key;
  Linear W_value;
  double dropout;
};

// 3.6.1: num_heads independent CausalAttention heads, outputs concatenated on the last dimension.
struct MultiHeadAttentionWrapper {
  MultiHeadAttentionWrapper(std::size_t d_in, std::size_t d_out, double dropout, std::size_t num_heads,
                            bool qkv_bias, TorchGenerator& gen);
  // The heads run one after another, each drawing its own dropout mask.
  std::vector<CausalAttention::Pass> attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const;
  Tensor3 forward(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const;  // (b, n, num_heads*d_out)
  // torch.cat([head(x) for head in self.heads], dim=-1) of the heads' passes.
  static Tensor3 concat(const std::vector<CausalAttention::Pass>& passes);
  std::size_t num_parameters() const;

  std::vector<CausalAttention> heads;
};

// Every intermediate of a multi-head forward pass (MultiHeadAttention and GroupedQueryAttention).
struct MultiHeadPass {
  Tensor3 queries_proj;       // (b, num_tokens, d_out): W_query(x)
  Tensor3 keys_proj;          // (b, num_tokens, kv_heads * head_dim)
  Tensor3 values_proj;        // (b, num_tokens, kv_heads * head_dim)
  Tensor4 queries;            // (b, num_heads, num_tokens, head_dim): after view and transpose(1, 2)
  Tensor4 keys;               // (b, kv_heads, num_tokens, head_dim)
  Tensor4 values;             // (b, kv_heads, num_tokens, head_dim)
  Tensor4 keys_repeated;      // (b, num_heads, num_tokens, head_dim): GQA's repeat_interleave (= keys for MHA)
  Tensor4 values_repeated;    // (b, num_heads, num_tokens, head_dim)
  AnyTensor attn_scores;      // (b, num_heads, num_tokens, num_tokens), unmasked
  AnyTensor masked;           // the same with -inf above each head's diagonal
  AnyTensor attn_weights;     // (b, num_heads, num_tokens, num_tokens), softmax of masked / sqrt(head_dim)
  AnyTensor attn_weights_dropout;  // after dropout
  Tensor4 context_heads;      // (b, num_tokens, num_heads, head_dim): (attn_weights @ values).transpose(1, 2)
  Tensor3 context_combined;   // (b, num_tokens, d_out): .contiguous().view(b, num_tokens, d_out)
  Tensor3 context_vecs;       // (b, num_tokens, d_out): out_proj(context_combined)
};

// 3.6.2: one projection each for queries, keys and values, split into heads by view/transpose.
struct MultiHeadAttention {
  MultiHeadAttention(std::size_t d_in, std::size_t d_out, double dropout, std::size_t num_heads, bool qkv_bias,
                     TorchGenerator& gen);
  // Every intermediate, as the lesson shows them (PyTorch's bmm arithmetic).
  MultiHeadPass attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const;
  // The same with the attention weights' dropout at p instead of the layer's own rate: 0 in eval mode
  // (model.eval(), chapter 4's generation), when gen is not read.
  MultiHeadPass attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng, double p) const;
  // Just the output. Without dropout it takes the chapter's path with heads as strided views
  // (causal_attention_unfused); with dropout it is attend()'s output.
  Tensor3 forward(const Tensor3& x, TorchGenerator& gen, DropoutRng rng, unsigned threads = 2) const;
  std::size_t num_parameters() const;
  // The weights as the fused forward takes them (kernels/fast.hpp's mha_forward_fused, library attn_fast).
  AttentionWeights weights() const { return {W_query, W_key, W_value, out_proj, num_heads, num_heads}; }

  std::size_t num_heads;
  std::size_t head_dim;
  Linear W_query;   // (d_out, d_in)
  Linear W_key;     // (d_out, d_in)
  Linear W_value;   // (d_out, d_in)
  Linear out_proj;  // (d_out, d_out), with bias
  double dropout;
};

// rasbt/LLMs-from-scratch ch04/04_gqa, without its KV cache: num_kv_groups key/value heads, each shared
// by num_heads / num_kv_groups query heads. Parameters drawn W_key, W_value, W_query, out_proj (no bias).
struct GroupedQueryAttention {
  GroupedQueryAttention(std::size_t d_in, std::size_t d_out, double dropout, std::size_t num_heads,
                        std::size_t num_kv_groups, bool qkv_bias, TorchGenerator& gen);
  MultiHeadPass attend(const Tensor3& x, TorchGenerator& gen, DropoutRng rng) const;
  std::size_t num_parameters() const;
  // The weights as the fused forward takes them (kernels/fast.hpp's gqa_forward_fused, library attn_fast);
  // attend() is the module's forward, dropout included.
  AttentionWeights weights() const { return {W_query, W_key, W_value, out_proj, num_heads, num_kv_groups}; }

  std::size_t num_heads;
  std::size_t num_kv_groups;
  std::size_t head_dim;
  Linear W_key;     // (num_kv_groups * head_dim, d_in)
  Linear W_value;   // (num_kv_groups * head_dim, d_in)
  Linear W_query;   // (d_out, d_in)
  Linear out_proj;  // (d_out, d_out), no bias
  double dropout;
};

// The stages of multi_head_attend, one function each, for the lessons that show every stage:
// (b, n, heads * head_dim) -> view and transpose(1, 2) -> (b, heads, n, head_dim), materialised.
Tensor4 split_heads(const Tensor3& x, std::size_t heads, std::size_t head_dim);
// repeat_interleave(num_heads / kv_heads, dim=1): (b, kv_heads, n, hd) -> (b, num_heads, n, hd).
Tensor4 repeat_kv_heads(const Tensor4& x, std::size_t num_heads);
// queries @ keys.transpose(2, 3): (b, h, n, hd) x (b, h, n, hd) -> (b, h, n, n), PyTorch's bmm arithmetic.
AnyTensor head_scores(const Tensor4& queries, const Tensor4& keys);
// torch.softmax(masked / head_dim**0.5, dim=-1): (b, h, n, n).
AnyTensor head_weights(const AnyTensor& masked, std::size_t head_dim);
// (weights @ values).transpose(1, 2): (b, h, n, n) x (b, h, n, hd) -> (b, n, h, hd).
Tensor4 head_context(const AnyTensor& weights, const Tensor4& values);
// .contiguous().view(b, n, h * hd): the heads of each token side by side.
Tensor3 combine_heads(const Tensor4& context_heads);

// The KV cache (rasbt/LLMs-from-scratch ch04/03_kv-cache), one function per line of its forward:
// x (b, n, heads * hd) -> .view(b, n, heads, hd), without the transpose: the layout cache_k is kept in.
Tensor4 view_heads(const Tensor3& x, std::size_t heads, std::size_t head_dim);
// torch.cat([cache, fresh], dim=1): (b, t, kv, hd) and (b, n, kv, hd) -> (b, t + n, kv, hd).
Tensor4 cat_tokens(const Tensor4& cache, const Tensor4& fresh);
// .transpose(1, 2), materialised: (b, n, heads, hd) -> (b, heads, n, hd).
Tensor4 heads_first(const Tensor4& x);
// attn_scores.masked_fill_(mask.bool(), -inf): mask (num_tokens_Q, num_tokens_K) of 0/1, the same for every
// batch element and head of scores (b, h, num_tokens_Q, num_tokens_K).
AnyTensor masked_where(const AnyTensor& scores, const Matrix& mask);

// The shared multi-head computation: queries (b, h, n, hd) against keys/values (b, kv, n, hd), each
// key/value head serving h / kv query heads (kv == h is MHA). Fills every field of `pass` from
// queries_proj/keys_proj/values_proj on, except context_vecs.
void multi_head_attend(MultiHeadPass& pass, std::size_t num_heads, std::size_t kv_heads, std::size_t head_dim,
                       double dropout_p, TorchGenerator& gen, DropoutRng rng);

}  // namespace attn
