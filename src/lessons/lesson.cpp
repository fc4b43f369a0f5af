#include "lessons/lesson.hpp"

#include "lessons/lessons.hpp"

#include <cerrno>
#include <charconv>
#include <limits>
#include <cstdlib>
#include <stdexcept>

#include <CLI/CLI.hpp>

namespace attn {

Trace::Trace(LessonInfo lesson_info, const Inputs& in) : info(std::move(lesson_info)), inputs(in) {
  config["input"] = in.source;
}

const Step& Trace::step(const std::string& id) const {
  for (const auto& s : steps)
    if (s.id == id) return s;
  throw std::out_of_range("no step '" + id + "' in lesson " + info.name);
}

CLI::App* LessonRegistry::add(const LessonInfo& info, LessonFn fn) {
  CLI::App* sub = app_.add_subcommand(info.name, info.summary + " (book section " + info.section + ")");
  add_common_options(sub, common_);
  entries_.push_back(Entry{info, sub, std::move(fn)});
  return sub;
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        const std::string expected =
            "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" + value + "'";
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return expected;
        errno = 0;
        const unsigned long long v = std::strtoull(value.c_str(), nullptr, 10);
        if (errno == ERANGE || v < min || v > max) return expected;
        return {};
      },
      "");
}

void check_elements(const std::string& what, std::initializer_list<std::size_t> shape) {
  const std::size_t count = saturating_product(shape);
  if (count > kMaxElements)
    throw UsageError("this would build " + what + " of " + with_commas(count) + " numbers, more than the limit of " +
                     with_commas(kMaxElements) + "; use fewer tokens, heads or a smaller batch");
}

void add_query_option(CLI::App* cmd, std::optional<std::size_t>& query) {
  cmd->add_option_function<std::size_t>(
         "--query", [&query](const std::size_t& q) { query = q; },
         "Index of the query token, counted from 0 (default: 1, \"journey\", as in the book; 0 for a "
         "one-token input)")
      ->check(whole_number(0, kMaxTokens - 1))
      ->type_name("I");
}

Inputs load_inputs(const CommonOptions& common) {
  if (!common.random.empty() && !common.input.empty()) throw UsageError("--input and --random exclude each other");
  if (common.random.empty()) return load_embeddings(common.input.empty() ? default_embeddings_path() : common.input);
  const auto x = common.random.find('x');
  const std::size_t n = std::stoul(common.random.substr(0, x));
  const std::size_t d = std::stoul(common.random.substr(x + 1));
  if (n < 1 || n > kMaxTokens)
    throw UsageError("--random " + common.random + ": N must be from 1 to " + std::to_string(kMaxTokens) + " tokens");
  if (d < 1 || d > kMaxDims)
    throw UsageError("--random " + common.random + ": D must be from 1 to " + std::to_string(kMaxDims) + " dims");
  Inputs in;
  TorchGenerator gen(0);
  in.embeddings = gen.rand(n, d);  // (n, d)
  for (std::size_t i = 0; i < n; ++i) in.tokens.push_back("x" + std::to_string(i + 1));
  in.source = "torch.rand(" + std::to_string(n) + ", " + std::to_string(d) + ") after torch.manual_seed(0)";
  return in;
}

void add_d_out_option(CLI::App* cmd, std::size_t& d_out, const std::string& what) {
  cmd->add_option("--d-out", d_out, what)->capture_default_str()->check(whole_number(1, kMaxDims))->type_name("N");
}

void add_seed_option(CLI::App* cmd, std::optional<std::uint64_t>& seed, const std::string& book_seeds) {
  cmd->add_option_function<std::uint64_t>(
         "--seed", [&seed](const std::uint64_t& s) { seed = s; },
         "Replace every torch.manual_seed value of the lesson (default: the book's " + book_seeds + ")")
      ->check(whole_number(0, std::numeric_limits<std::uint64_t>::max()))
      ->type_name("N");
}

void add_qkv_bias_option(CLI::App* cmd, bool& qkv_bias) {
  cmd->add_flag("--qkv-bias", qkv_bias, "Give the query, key and value nn.Linear layers a bias (qkv_bias=True)");
}

void add_dropout_options(CLI::App* cmd, double& dropout, DropoutRng& rng, const std::string& what) {
  cmd->add_option("--dropout", dropout, what)
      ->capture_default_str()
      ->type_name("P")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            char* end = nullptr;
            const double p = std::strtod(v.c_str(), &end);
            if (v.empty() || end != v.c_str() + v.size() || !(p >= 0.0 && p <= 1.0))
              return "expected a probability from 0 to 1, got '" + v + "'";
            return {};
          },
          ""));
  cmd->add_option_function<std::string>(
         "--dropout-rng", [&rng](const std::string& name) { rng = parse_dropout_rng(name); },
                  "How dropout masks are drawn, which depends on how your PyTorch was built: 'default' as builds "
                  "without MKL (Apple silicon, Debian's python3-torch; the book's numbers), 'mkl' as the x86-64 "
                  "Linux/Windows wheels. python -c 'import torch; print(torch.backends.mkl.is_available())' "
                  "prints True for mkl")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return v == "default" || v == "mkl" ? "" : "expected default or mkl, got '" + v + "'";
          },
          ""))
      ->default_str("default")
      ->type_name("RNG");
}

void add_batch_option(CLI::App* cmd, std::size_t& batch) {
  cmd->add_option("--batch", batch, "Batch size: the inputs stacked this many times (torch.stack)")
      ->capture_default_str()
      ->check(whole_number(1, kMaxBatch))
      ->type_name("B");
}

void add_heads_option(CLI::App* cmd, std::size_t& heads) {
  cmd->add_option("--heads", heads, "Number of attention heads (num_heads)")
      ->capture_default_str()
      ->check(whole_number(1, kMaxHeads))
      ->type_name("H");
}

void add_kv_groups_option(CLI::App* cmd, std::size_t& kv_groups) {
  cmd->add_option("--kv-groups", kv_groups,
                  "Number of key/value heads (num_kv_groups); each serves heads / kv-groups query heads")
      ->capture_default_str()
      ->check(whole_number(1, kMaxHeads))
      ->type_name("G");
}

void record_module_config(Trace& t, const ModuleOptions& opt, bool heads, bool kv_groups, bool dropout, bool batch) {
  t.config["d_out"] = opt.d_out;
  if (heads) t.config["heads"] = opt.heads;
  if (kv_groups) t.config["kv_groups"] = opt.kv_groups;
  if (dropout) {
    t.config["dropout"] = opt.dropout;
    t.config["dropout_rng"] = to_string(opt.dropout_rng);
  }
  t.config["seed"] = opt.seed ? nlohmann::ordered_json(*opt.seed) : nlohmann::ordered_json(nullptr);
  t.config["qkv_bias"] = opt.qkv_bias;
  if (batch) t.config["batch"] = opt.batch;
}

void check_heads(const ModuleOptions& opt, bool with_kv_groups) {
  if (opt.d_out % opt.heads != 0)
    throw UsageError("--d-out " + std::to_string(opt.d_out) + " is not divisible by --heads " +
                     std::to_string(opt.heads) + " (each head gets d_out / heads dimensions)");
  if (with_kv_groups && opt.heads % opt.kv_groups != 0)
    throw UsageError("--heads " + std::to_string(opt.heads) + " is not divisible by --kv-groups " +
                     std::to_string(opt.kv_groups) + " (each key/value group serves heads / kv-groups query heads)");
}

Tensor3 make_batch(const Matrix& inputs, std::size_t b) {
  Tensor3 out = xt::empty<float>({b, inputs.shape(0), inputs.shape(1)});  // (b, num_tokens, d_in)
  for (std::size_t i = 0; i < b; ++i) xt::view(out, i) = inputs;
  return out;
}

Tensor3 add_batch_step(Trace& t, const Matrix& inputs, std::size_t b) {
  Tensor3 batch = make_batch(inputs, b);  // (b, num_tokens, d_in)
  t.add("batch", "A batch of inputs",
        "Modules take a batch of sequences: here the same inputs stacked " + std::to_string(b) + " times.",
        "batch = torch.stack((inputs,) * " + std::to_string(b) + ", dim=0)", batch);
  return batch;
}

std::string py_float(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string with_commas(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void add_common_options(CLI::App* cmd, CommonOptions& common) {
  cmd->add_option("--input", common.input,
                  "Embeddings to use instead of the book's six tokens: a JSON file "
                  "{\"tokens\": [...], \"embeddings\": [[...], ...]} or a CSV file (one row per token, "
                  "optional first column of token text). Default: the book's data/journey.json")
      ->type_name("FILE");
  cmd->add_option("--random", common.random,
                  "Random inputs instead: N tokens of D dims from torch.rand(N, D) after torch.manual_seed(0), "
                  "e.g. 1024x768")
      ->type_name("NxD")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const auto x = v.find('x');
            const auto digits = [](const std::string& s) {
              return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
            };
            if (x == std::string::npos || !digits(v.substr(0, x)) || !digits(v.substr(x + 1)))
              return "expected NxD with whole numbers, e.g. 1024x768, got '" + v + "'";
            return {};
          },
          ""));
  cmd->add_flag("--json", common.json,
                "Print one JSON document (config, inputs, every step's tensor) instead of text; see docs/json.md");
  const auto when = CLI::Validator(
      [](std::string& v) -> std::string {
        return v == "never" || v == "auto" || v == "always" ? "" : "expected never, auto or always, got '" + v + "'";
      },
      "");
  cmd->add_option("--color", common.color,
                  "Colour: auto = when stdout is a terminal, NO_COLOR is unset and TERM is not dumb; --json never "
                  "has colour")
      ->capture_default_str()
      ->check(when)
      ->type_name("WHEN");
  cmd->add_option("--heatmap", common.heatmap,
                  "Also draw weight matrices as heatmaps (token labels, every number, masked cells as a dot): auto "
                  "= when stdout is a terminal")
      ->capture_default_str()
      ->check(when)
      ->type_name("WHEN");
  cmd->add_flag("--pause", common.pause,
                "Wait for Enter after each step, q to quit (only when stdin and stdout are terminals; ignored "
                "otherwise, so scripts never hang)");
  cmd->add_flag("--quiet", common.quiet, "Only each step's id and tensor, for diffing against the book");
  cmd->add_flag("--explain,!--no-explain", common.explain,
                "Show each step's explanation and the book's PyTorch code (default; --no-explain hides them)");
}

std::string token_label(const Inputs& in, std::size_t i) {
  return std::to_string(i) + " \"" + in.tokens.at(i) + "\"";
}

std::size_t effective_query(const std::optional<std::size_t>& query, const Inputs& in) {
  const std::size_t q = query.value_or(in.num_tokens() > kBookQuery ? kBookQuery : 0);
  if (q >= in.num_tokens())
    throw UsageError("--query " + std::to_string(q) + " is past the last token (the input has " +
                     std::to_string(in.num_tokens()) + " tokens, numbered 0 to " +
                     std::to_string(in.num_tokens() - 1) + ")");
  return q;
}

void register_all_lessons(LessonRegistry& registry) {
  register_simple(registry);
  register_all_tokens(registry);
  register_trainable(registry);
  register_causal(registry);
  register_dropout(registry);
  register_mha_wrapper(registry);
  register_mha(registry);
  register_gqa(registry);
}

}  // namespace attn
