#pragma once
// The lessons, in book order. Each has an options struct (every field initialised to the book's
// value), run_X (computes the Trace) and register_X (adds the subcommand and its options).
#include <cstddef>
#include <cstdint>
#include <optional>

#include "lessons/lesson.hpp"

namespace attn {

// Book values a lesson uses unless told otherwise.
inline constexpr std::size_t kBookQuery = 1;  // inputs[1], "journey"

// `--query I`: the book's query index 1, or 0 when the input has a single token.
std::size_t effective_query(const std::optional<std::size_t>& query, const Inputs& in);

// 3.3.1 A simple self-attention mechanism without trainable weights
struct SimpleOptions {
  std::optional<std::size_t> query;  // default: kBookQuery
};
extern const LessonInfo kSimpleLesson;
Trace run_simple(const Inputs& in, const SimpleOptions& opt);
void register_simple(LessonRegistry& registry);

// 3.3.2 Computing attention weights for all input tokens
struct AllTokensOptions {};
extern const LessonInfo kAllTokensLesson;
Trace run_all_tokens(const Inputs& in, const AllTokensOptions& opt);
void register_all_tokens(LessonRegistry& registry);

// 3.4.1 / 3.4.2 Self-attention with trainable weights, step by step and as SelfAttention_v1/v2
struct TrainableOptions {
  std::size_t d_out = 2;
  std::optional<std::uint64_t> seed;  // replaces every torch.manual_seed value (book: 123, 123, 789)
  bool qkv_bias = false;
  std::optional<std::size_t> query;   // default: kBookQuery
};
extern const LessonInfo kTrainableLesson;
Trace run_trainable(const Inputs& in, const TrainableOptions& opt);
void register_trainable(LessonRegistry& registry);

// 3.5.1 and 3.5.3: masking future tokens, then the CausalAttention class over a batch.
extern const LessonInfo kCausalLesson;
ModuleOptions causal_defaults();  // d_out 2, dropout 0.0, batch 2
Trace run_causal(const Inputs& in, const ModuleOptions& opt);
void register_causal(LessonRegistry& registry);

// The causal attention weights of 3.5.1 (SelfAttention_v2 after manual_seed(seed)), every step on the way.
struct CausalWeights {
  Matrix queries, keys;      // (num_tokens, d_out)
  Matrix attn_scores;        // (num_tokens, num_tokens)
  Matrix attn_weights;       // (num_tokens, num_tokens), unmasked
  Matrix mask_simple;        // (num_tokens, num_tokens), tril of ones
  Matrix masked_simple;      // attn_weights * mask_simple
  Matrix row_sums;           // (num_tokens, 1)
  Matrix masked_simple_norm;  // masked_simple / row_sums
  Matrix mask;               // (num_tokens, num_tokens), triu of ones above the diagonal
  Matrix masked;             // attn_scores with -inf where mask is 1
  Matrix causal_attn_weights;  // softmax(masked / sqrt(d_k))
};
CausalWeights causal_weights(const Inputs& in, std::size_t d_out, std::uint64_t seed, bool qkv_bias);

// 3.5.2: dropout on a matrix of ones and on the causal attention weights.
extern const LessonInfo kDropoutLesson;
ModuleOptions dropout_defaults();  // dropout 0.5
Trace run_dropout(const Inputs& in, const ModuleOptions& opt);
void register_dropout(LessonRegistry& registry);

// 3.6.1: stacking CausalAttention heads.
extern const LessonInfo kMhaWrapperLesson;
ModuleOptions mha_wrapper_defaults();  // d_out 2, heads 2
Trace run_mha_wrapper(const Inputs& in, const ModuleOptions& opt);
void register_mha_wrapper(LessonRegistry& registry);

// 3.6.2: multi-head attention with weight splits.
extern const LessonInfo kMhaLesson;
ModuleOptions mha_defaults();  // d_out 2, heads 2
Trace run_mha(const Inputs& in, const ModuleOptions& opt);
void register_mha(LessonRegistry& registry);

// Grouped-query attention (rasbt/LLMs-from-scratch ch04/04_gqa).
extern const LessonInfo kGqaLesson;
ModuleOptions gqa_defaults();  // d_out 4, heads 4, kv_groups 2
Trace run_gqa(const Inputs& in, const ModuleOptions& opt);

// `attn gqa --kv-cache`: the KV-cache memory of MHA and GQA for a model configuration.
struct KvCacheOptions {
  std::size_t emb_dim = 4096;
  std::size_t heads = 32;
  std::size_t kv_groups = 8;  // the number of key/value heads, as in GroupedQueryAttention
  std::size_t layers = 32;
  std::size_t context_length = 32768;
  std::size_t batch = 1;
  std::string dtype = "bf16";  // fp32 | bf16 | fp16
};
Trace run_kv_cache(const Inputs& in, const KvCacheOptions& opt);
void register_gqa(LessonRegistry& registry);

// Every lesson, in book order.
void register_all_lessons(LessonRegistry& registry);

}  // namespace attn
