#include "lessons/helpers.hpp"

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

void check_elements(const std::string& what, std::initializer_list<std::size_t> shape) {
  const std::size_t count = saturating_product(shape);
  if (count > kMaxElements)
    throw UsageError("this would build " + what + " of " + with_commas(count) + " numbers, more than the limit of " +
                     with_commas(kMaxElements) + "; use fewer tokens, heads or a smaller batch");
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

BatchStep::BatchStep(Trace& t, const Matrix& inputs, std::size_t b)
    : value(t.lazy<Tensor3>([x = &inputs, b] { return make_batch(*x, b); })) {
  t.add("batch", "A batch of inputs",
        "Modules take a batch of sequences: here the same inputs stacked " + std::to_string(b) + " times.",
        "batch = torch.stack((inputs,) * " + std::to_string(b) + ", dim=0)", {b, inputs.shape(0), inputs.shape(1)},
        value);
}

void add_num_params_step(Trace& t, const std::string& module, std::size_t count) {
  t.add("num_params", "Parameters of " + module + ": " + with_commas(count),
        "Every weight and bias of the module counted; exercise 3.3 asks this of GPT-2's size, "
        "attn mha --random 1024x768 --d-out 768 --heads 12 --step num_params.",
        "sum(p.numel() for p in " + module + ".parameters())", Scalar(static_cast<float>(count)))
      .python_int = static_cast<std::int64_t>(count);
}

std::string seed_help(const std::string& book_seeds) {
  return "Replace every torch.manual_seed value of the lesson (default: the book's " + book_seeds + ")";
}

void add_linear_steps(Trace& t, const std::string& path, const Linear& layer, const std::string& role) {
  const std::string out = std::to_string(layer.weight.shape(0)), in = std::to_string(layer.weight.shape(1));
  t.add(path + ".weight", "Parameter " + path + ".weight",
        "nn.Linear " + role + ". It keeps its weight as (out_features, in_features) = (" + out + ", " + in +
            ") and computes x @ weight.T" + (layer.bias.size() ? " + bias" : "") + ".",
        "print(" + path + ".weight)", layer.weight);  // (out_features, in_features)
  if (layer.bias.size() == 0) return;
  t.add(path + ".bias", "Parameter " + path + ".bias", "Added to every output of " + path + ".",
        "print(" + path + ".bias)", layer.bias);  // (out_features,)
}

std::string token_label(const Inputs& in, std::size_t i) {
  return std::to_string(i) + " \"" + in.tokens.at(i) + "\", x^(" + std::to_string(i + 1) + ")";
}

std::string query_note(const Inputs& in, std::size_t q) {
  if (q == kBookQuery) return "";
  return "The book's query is x^(2), inputs[1]; the steps keep its names (x_2, query_2, attn_scores_2, "
         "context_vec_2, ...), and here they hold x^(" + std::to_string(q + 1) + "), inputs[" + std::to_string(q) +
         "], \"" + in.tokens.at(q) + "\".";
}

}  // namespace attn
