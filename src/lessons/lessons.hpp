#pragma once
// Each lesson's computation, for the registry (registry.cpp) and for tests that call a lesson directly.
// Every lesson file defines `Lesson NAME_lesson()` (its registry entry) and the run_X declared here;
// run_X reads only the LessonConfig fields its mode lists.
#include <cstdint>

#include "modules/attention.hpp"
#include "model/gpt2_model.hpp"
#include "lessons/config.hpp"
#include "lessons/helpers.hpp"
#include "lessons/registry.hpp"

namespace attn {

// 3.3.1 A simple self-attention mechanism without trainable weights (reads: query)
ResolvedTrace run_simple(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// 3.3.2 Computing attention weights for all input tokens (reads nothing)
ResolvedTrace run_all_tokens(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// 3.4.1 / 3.4.2 Self-attention with trainable weights, step by step and as SelfAttention_v1/v2
// (reads: d_out, seed, qkv_bias, query)
ResolvedTrace run_trainable(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// 3.5.1 and 3.5.3: masking future tokens, then the CausalAttention class over a batch
// (reads: d_out, dropout, dropout_rng, batch, seed, qkv_bias)
ResolvedTrace run_causal(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// The causal attention weights of 3.5.1 (SelfAttention_v2 after manual_seed(seed)), every step on the
// way, each a lazy node of the trace `t`: computed only if a shown step needs it. Handles: copyable, valid
// until the trace resolves.
struct CausalWeights {
  // Under --model, sa_v2 holds head `head`'s real projections (lessons/helpers: use_real_head).
  CausalWeights(Trace& t, const Inputs& in, std::size_t d_out, std::uint64_t seed, bool qkv_bias, std::size_t head = 0);

  Node<SelfAttention_v2> sa_v2;      // kept by the trace
  Node<Matrix> queries, keys;        // (num_tokens, d_out)
  Node<Matrix> attn_scores;          // (num_tokens, num_tokens)
  Node<Matrix> attn_weights;         // (num_tokens, num_tokens), unmasked
  Node<Matrix> mask;                 // (num_tokens, num_tokens), triu of ones above the diagonal
  Node<Matrix> mask_simple;          // (num_tokens, num_tokens), tril of ones
  Node<Matrix> masked_simple;        // attn_weights * mask_simple
  Node<Matrix> row_sums;             // (num_tokens, 1)
  Node<Matrix> masked_simple_norm;   // masked_simple / row_sums
  Node<Matrix> masked;               // attn_scores with -inf where mask is 1
  Node<Matrix> causal_attn_weights;  // softmax(masked / sqrt(d_k))
};

// 3.5.2: dropout on a matrix of ones and on the causal attention weights
// (reads: dropout, dropout_rng, d_out, seed, qkv_bias)
ResolvedTrace run_dropout(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// 3.6.1: stacking CausalAttention heads (reads: heads, d_out, dropout, dropout_rng, batch, seed, qkv_bias)
ResolvedTrace run_mha_wrapper(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// 3.6.2: multi-head attention with weight splits (reads: heads, d_out, dropout, dropout_rng, batch, seed, qkv_bias)
ResolvedTrace run_mha(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// Grouped-query attention, rasbt/LLMs-from-scratch ch04/04_gqa (reads: the mha options and kv_groups)
ResolvedTrace run_gqa(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// The KV cache, rasbt/LLMs-from-scratch ch04/03_kv-cache: decoding token by token
// (reads: prompt, heads, kv_groups (0: MultiHeadAttention), d_out, batch, seed, qkv_bias)
ResolvedTrace run_kv_cache(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// `attn kv-cache --estimate` and `attn gqa --kv-cache`: the KV-cache memory of MHA and GQA for a model
// configuration, under the lesson `info` (reads: emb_dim, heads, kv_groups, layers, context_length, batch, dtype)
ResolvedTrace run_kv_cache_estimate(const LessonInfo& info, const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});
// That report as a mode of a lesson, picked by the flag `selector`.
LessonMode kv_cache_estimate_mode(const LessonInfo& info, Opt selector, const std::string& selector_help);

// attn heads: every head of every layer at once (bertviz's model view): one step per layer of GPT-2 (--model),
// or the chapter's MultiHeadAttention as one layer (reads: heads, d_out, seed, qkv_bias)
ResolvedTrace run_heads(const Inputs& in, const LessonConfig& cfg, const Selection& sel = {});

// What attn heads says under each head (Step::head_notes), as phrases of its content with a {share}.
struct HeadNoteWords {
  std::string previous, first, self, spread;
};
HeadNoteWords head_note_words(const Words& words = {});
// One note per head of a layer's weights (heads, num_tokens, num_tokens): over the query rows 1 .. n-1 (row 0
// attends only to itself, key 0), the mean weight on the previous key (i - 1), on the first key (0) and on
// the query's own key (i); the largest, tried in that order and taken only if strictly larger, names the head
// when it is at least kHeadNoteShare, with its share to two decimals ("previous token (0.62)"); otherwise the
// head spreads its weight. A one-token input has only row 0: "first token (1.00)".
inline constexpr float kHeadNoteShare = 0.5f;
std::vector<std::string> head_notes(const Tensor3& weights, const HeadNoteWords& words);

}  // namespace attn
