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

// Every lesson, in book order.
void register_all_lessons(LessonRegistry& registry);

}  // namespace attn
