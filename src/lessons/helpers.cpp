#include "lessons/helpers.hpp"

#include <algorithm>

#include "model/gpt2_model.hpp"

namespace attn {

std::size_t effective_query(const std::optional<std::int64_t>& query, const Inputs& in) {
  const std::int64_t n = static_cast<std::int64_t>(in.num_tokens());
  const std::int64_t q = query.value_or(n > static_cast<std::int64_t>(kBookQuery) ? kBookQuery : 0);
  if (q < 0 || q >= n)
    throw UsageError("--query " + std::to_string(q) + (q < 0 ? " is not a token index" : " is past the last token") +
                     " (the input has " + count_of(in.num_tokens(), "token") + ", numbered 0 to " +
                     std::to_string(n - 1) + ")");
  return static_cast<std::size_t>(q);
}

void check_heads(const LessonConfig& cfg, bool with_kv_groups) {
  if (cfg.d_out % cfg.heads != 0)
    throw UsageError("--d-out " + std::to_string(cfg.d_out) + " is not divisible by --heads " +
                     std::to_string(cfg.heads) + " (each head gets d_out / heads dimensions)");
  if (with_kv_groups && cfg.heads % cfg.kv_groups != 0)
    throw UsageError("--heads " + std::to_string(cfg.heads) + " is not divisible by --kv-groups " +
                     std::to_string(cfg.kv_groups) + " (each key/value group serves heads / kv-groups query heads)");
}

Tensor3 make_batch(const Matrix& inputs, std::size_t b) {
  Tensor3 out = xt::empty<float>({b, inputs.shape(0), inputs.shape(1)});  // (b, num_tokens, d_in)
  for (std::size_t i = 0; i < b; ++i) xt::view(out, i) = inputs;
  return out;
}

Node<Tensor3> add_batch_step(const LessonText& text, std::size_t b) {
  Trace& t = text.trace();
  const Node<Matrix> inputs = t.embeddings();                       // (num_tokens, d_in)
  const Node<Tensor3> batch = t.lazy<Tensor3>(make_batch, inputs, b);  // (b, num_tokens, d_in)
  text.with({{"b", std::to_string(b)}}).add("batch", {b, inputs->shape(0), inputs->shape(1)}, batch);
  return batch;
}

void add_num_params_step(const LessonText& text, const std::string& module, std::size_t count,
                         const std::string& id) {
  text.with({{"module", module}, {"count", text.number(count)}})
      .add(id, Scalar(static_cast<float>(count)))
      .python_int = static_cast<std::int64_t>(count);
}

std::string seed_help(const std::string& book_seeds) {
  return fill(lesson_content("shared").piece("phrases/seed_help", ""), {{"seeds", book_seeds}}, "seed_help");
}

std::string option_help(const std::string& lesson, const std::string& option) {
  return lesson_content(lesson).piece("phrases/help_" + option, "");
}

// A parameter path as named_parameters() spells it ("mha.heads.0.W_query") as the Python that reaches the
// layer: an nn.ModuleList's index is a subscript ("mha.heads[0].W_query"); "heads.0" is not Python.
static std::string python_attribute(const std::string& path) {
  std::string out;
  std::size_t from = 0;
  while (from <= path.size()) {
    const std::size_t dot = std::min(path.find('.', from), path.size());
    const std::string part = path.substr(from, dot - from);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    out += index ? "[" + part + "]" : (out.empty() ? "" : ".") + part;
    from = dot + 1;
  }
  return out;
}

void add_linear_steps(const LessonText& text, const std::string& path, const Linear& layer, const std::string& role) {
  const LessonText words = text.with({{"path", path},
                                      {"attribute", python_attribute(path)},
                                      {"role", role},
                                      {"out", std::to_string(layer.weight.shape(0))},
                                      {"in", std::to_string(layer.weight.shape(1))},
                                      {"plus_bias", layer.bias.size() ? " + bias" : ""}});
  words.add("{path}.weight", layer.weight);  // (out_features, in_features)
  if (layer.bias.size() == 0) return;
  words.add("{path}.bias", layer.bias);  // (out_features,)
}

namespace {
std::string real_run(const LessonText& text, const Inputs& in, const std::string& phrase, const TextValues& values) {
  if (!in.model) return "";
  TextValues all = values;
  all["layer"] = std::to_string(in.model->layer);
  return "\n" + text.with(all).phrase(phrase);
}
}  // namespace

std::string real_head_run(const LessonText& text, const Inputs& in, const std::string& module, std::size_t head) {
  return real_run(text, in, "real_head_run", {{"module_var", module}, {"head", std::to_string(head)}});
}

std::string real_layer_run(const LessonText& text, const Inputs& in, const std::string& module) {
  return real_run(text, in, "real_layer_run", {{"module_var", module}});
}

std::string token_label(const Inputs& in, std::size_t i) {
  return std::to_string(i) + " " + token_repr(in.tokens.at(i)) + ", x^(" + std::to_string(i + 1) + ")";
}

namespace {
// A phrase of the shared content in `words`' language, filled in.
std::string shared_phrase(const std::string& name, const std::string& variant, const TextValues& values,
                          const Words& words) {
  return words.fill_piece(words.content("shared"), "phrases/" + name, variant, values);
}
}  // namespace

std::string query_note(const Inputs& in, std::size_t q, const Words& words) {
  if (q == kBookQuery) return "";
  return shared_phrase("other_query", "",
                       {{"x", std::to_string(q + 1)}, {"q", std::to_string(q)}, {"token", token_repr(in.tokens.at(q))}},
                       words);
}

void add_query_notes(Trace& t, const Inputs& in, std::size_t q) {
  const Words& words = t.words;
  t.notes.push_back(shared_phrase("query", "", {{"label", token_label(in, q)}}, words));
  for (const auto& line : wrap_words(query_note(in, q, words), 80)) t.notes.push_back(line);
}

LessonConfig model_config(const LessonConfig& cfg, const Inputs& in, ModelUse use, Trace& t) {
  if (!in.model) return cfg;
  const Gpt2Config& c = in.model->model->config();
  LessonConfig out = cfg;
  out.qkv_bias = true;
  out.d_out = use == ModelUse::Layer ? c.n_embd : c.head_dim();
  out.heads = use == ModelUse::OneHead ? 1 : c.n_head;
  if (use == ModelUse::OneHead) {
    if (cfg.head && *cfg.head >= c.n_head)
      throw UsageError("--head " + std::to_string(*cfg.head) + " is past the last head of the model, which has " +
                       count_of(c.n_head, "head") + " per block: --head 0 to " + std::to_string(c.n_head - 1));
    out.head = cfg.head.value_or(0);
    t.config["head"] = *out.head;
  }
  t.config["d_out"] = out.d_out;
  if (use != ModelUse::OneHead) t.config["heads"] = out.heads;
  t.config["qkv_bias"] = true;
  return out;
}

void use_real_head(const Inputs& in, std::size_t head, Linear& W_query, Linear& W_key, Linear& W_value) {
  const Gpt2Attention& a = in.model->attention;  // (n_embd, n_embd) each, nn.Linear's layout
  const std::size_t head_dim = in.model->model->config().head_dim();
  W_query = head_rows(a.W_query, head, head_dim);  // (head_dim, n_embd)
  W_key = head_rows(a.W_key, head, head_dim);      // (head_dim, n_embd)
  W_value = head_rows(a.W_value, head, head_dim);  // (head_dim, n_embd)
}

void use_real_layer(const Inputs& in, Linear& W_query, Linear& W_key, Linear& W_value, Linear& out_proj) {
  const Gpt2Attention& real = in.model->attention;
  W_query = real.W_query;
  W_key = real.W_key;
  W_value = real.W_value;
  out_proj = real.out_proj;
}

std::string model_note(const Inputs& in, const LessonConfig& cfg, ModelUse use, const Words& words) {
  const Gpt2Config& c = in.model->model->config();
  const bool one = use == ModelUse::OneHead;
  return shared_phrase("model_note", one ? "head" : "layer",
                       {{"layer", std::to_string(in.model->layer)},
                        {"head", std::to_string(cfg.head.value_or(0))},
                        {"heads", std::to_string(c.n_head)},
                        {"head_dim", std::to_string(c.head_dim())}},
                       words);
}

}  // namespace attn
