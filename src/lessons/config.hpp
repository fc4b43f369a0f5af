#pragma once
// What a lesson is asked to do: one struct for every lesson, each field initialised to the book's most
// common value. A lesson mode (registry.hpp) names the fields it reads and overrides the defaults it
// needs (gqa: d_out 4, heads 4; dropout: p = 0.5). The command line fills it from the option table
// (cli/options.cpp); tests fill it directly.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/torch_random.hpp"

namespace attn {

// Element type of a KV cache (gqa --kv-cache).
enum class CacheDType { FP32, BF16, FP16 };
std::size_t bytes_per_element(CacheDType t);  // 4, 2, 2
std::string to_string(CacheDType t);          // "fp32", "bf16", "fp16"

struct LessonConfig {
  // --query; default: token 1, "journey" (0 for a one-token input). Signed, so that a negative index is
  // refused with the input's real range once the input is known.
  std::optional<std::int64_t> query;
  std::size_t d_out = 2;              // --d-out
  std::size_t heads = 2;              // --heads (num_heads)
  // --kv-groups (num_kv_groups: key/value heads). 0, kv-cache's default: none given, the lesson decodes
  // with MultiHeadAttention (as many key/value heads as --heads) instead of GroupedQueryAttention.
  std::size_t kv_groups = 2;
  double dropout = 0.0;               // --dropout
  double drop_rate = 0.1;             // --drop-rate: chapter 4's GPT_CONFIG_124M["drop_rate"], every nn.Dropout's
  DropoutRng dropout_rng = DropoutRng::Default;  // --dropout-rng
  std::optional<std::uint64_t> seed;  // --seed: replaces every torch.manual_seed value of the lesson
  bool qkv_bias = false;              // --qkv-bias
  std::size_t batch = 2;              // --batch
  std::size_t prompt = 1;             // --prompt (kv-cache): tokens cached in the first call
  std::size_t max_new_tokens = 6;     // --max-new-tokens (generate): the book's 6
  // --head (with --model): which of the model's heads a single-head lesson uses; head 0 when not given.
  std::optional<std::size_t> head;
  // gqa --kv-cache and kv-cache --estimate: the memory explorer (its mode's defaults are a Llama-like model's)
  bool kv_cache = false;
  bool estimate = false;
  std::size_t emb_dim = 4096;
  std::size_t layers = 32;
  std::size_t context_length = 32768;
  CacheDType dtype = CacheDType::BF16;
};

// The options a lesson mode can take, one per field above. The option table (cli/options.cpp) gives
// each its name, type, range, help and JSON config key.
enum class Opt { Query, DOut, Heads, KvGroups, Dropout, DropRate, DropoutRng, Seed, QkvBias, Batch, Prompt, MaxNewTokens, Head, KvCache,
                 Estimate, EmbDim, Layers, ContextLength, DType };

}  // namespace attn
