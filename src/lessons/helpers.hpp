#pragma once
// Small pieces the lesson files share: limits checked before the work, the batch step, and how numbers
// and tokens are named in titles. Nothing here knows the command line.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/nn.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "core/tensor.hpp"
#include "lessons/config.hpp"
#include "lessons/lesson_text.hpp"
#include "trace/trace.hpp"

namespace attn {

inline constexpr std::size_t kBookQuery = 1;  // inputs[1], "journey"

// `--query I`: the book's query index 1, or 0 when the input has a single token; a UsageError past the end.
std::size_t effective_query(const std::optional<std::int64_t>& query, const Inputs& in);


// d_out divisible by --heads (and --heads by --kv-groups): otherwise a UsageError naming the options.
void check_heads(const LessonConfig& cfg, bool with_kv_groups);

// torch.stack([inputs] * b): the batch of the module lessons.
Tensor3 make_batch(const Matrix& inputs, std::size_t b);  // (b, num_tokens, d_in)
// The lesson's "batch" step, torch.stack([inputs] * b) of the trace's embeddings, computed when a shown
// step needs it: `const Node<Tensor3> batch = add_batch_step(text, b);  // (b, num_tokens, d_in)`.
Node<Tensor3> add_batch_step(const LessonText& text, std::size_t b);

// The parameters of one nn.Linear as steps named by their PyTorch path ("mha.W_query.weight", as
// module.named_parameters() names them; "mha.heads.0.W_query.weight" for a ModuleList's layer, whose code
// reads it as Python does, mha.heads[0].W_query.weight): the weight (out_features, in_features), then the
// bias when the layer has one. `role` says what the layer does ("projects each token to its queries"). The words are the
// shared content's (data/lessons/shared.json).
void add_linear_steps(const LessonText& text, const std::string& path, const Linear& layer, const std::string& role);

// The module's parameter count as the step `id` ("num_params" unless a lesson counts several): a Python int,
// as sum(p.numel() for p in module.parameters()) gives it (exercises 3.3 and 4.1 ask for it).
void add_num_params_step(const LessonText& text, const std::string& module, std::size_t count,
                         const std::string& id = "num_params");

// --seed's help on a lesson whose book seeds are `book_seeds` ("789 for sa_v2, 123 for CausalAttention").
std::string seed_help(const std::string& book_seeds);
// A lesson's option help, its content's phrase "help_<option>" ("help_d_out").
std::string option_help(const std::string& lesson, const std::string& option);

// Token i's label for titles, the token as token_repr() shows it, with the book's 1-based name for it:
// 1 'journey', x^(2).
std::string token_label(const Inputs& in, std::size_t i);

// With --query q other than the book's 1: a sentence saying that the step ids keep the book's names for
// x^(2) and what they hold here. "" for the book's query.
std::string query_note(const Inputs& in, std::size_t q, const Words& words);
// The notes of --query: "query: token ...", then query_note wrapped.
void add_query_notes(Trace& t, const Inputs& in, std::size_t q);

// --model: how a lesson uses the pretrained layer. OneHead: one head's slices (trainable, causal, dropout;
// d_out = head_dim). EveryHead: one CausalAttention per head (mha-wrapper). Layer: the whole layer (mha,
// kv-cache; d_out = n_embd).
enum class ModelUse { OneHead, EveryHead, Layer };
// The config a lesson runs with: under --model, d_out, heads and qkv_bias (GPT-2's c_attn has a bias) are the
// layer's, recorded in the trace's config, and --head is checked against the model's heads. Unchanged without.
LessonConfig model_config(const LessonConfig& cfg, const Inputs& in, ModelUse use, Trace& t);
// --model: head `head`'s real projections in place of the three a module drew (d_out = head_dim). The module
// is built, and draws, first all the same, so dropout afterwards draws what the book's code would.
void use_real_head(const Inputs& in, std::size_t head, Linear& W_query, Linear& W_key, Linear& W_value);
// --model: the real layer's four projections in place of those a MultiHeadAttention drew (ModelUse::Layer),
// drawn first all the same, for the same reason.
void use_real_layer(const Inputs& in, Linear& W_query, Linear& W_key, Linear& W_value, Linear& out_proj);
// What a lesson's notes say under --model: "Weights: GPT-2's block 0, head 3 (--head)".
std::string model_note(const Inputs& in, const LessonConfig& cfg, ModelUse use, const Words& words);
// The notebook's line (--format py, ipynb) after building `module` that gives it the real layer's weights
// under --model, as use_real_head and use_real_layer do here; "" without --model. Each begins with a newline.
std::string real_head_run(const LessonText& text, const Inputs& in, const std::string& module, std::size_t head);
std::string real_layer_run(const LessonText& text, const Inputs& in, const std::string& module);

}  // namespace attn
