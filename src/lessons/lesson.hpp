#pragma once
// What a lesson gives back: a Trace, the ordered steps of one section of the book. A lesson computes
// and never prints; the renderers (render/text, render/json) print and never compute.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/limits.hpp"
#include "core/tensor.hpp"
#include "core/torch_random.hpp"
#include "io/embeddings.hpp"

namespace CLI {
class App;
class Validator;
}

namespace attn {

// An option value that cannot work with these inputs (e.g. --query past the last token): the CLI
// reports it like a bad option, with exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One subcommand: its name, where it is in the book, and what it teaches in a line.
struct LessonInfo {
  std::string name;     // "simple"
  std::string section;  // "3.3.1"
  std::string title;    // the book's section title
  std::string summary;  // one line for --help and `attn list`
};

struct Step {
  std::string id;           // the variable name the book uses: attn_scores_2, context_vec_2, ...
  std::string title;        // a few words
  std::string explanation;  // 1-3 sentences
  std::string code;         // the book's PyTorch line(s) that compute it
  AnyTensor tensor;         // float32, rank 0-4
  // A weight matrix (..., n, n) the text view may also draw as a heatmap; `causal` marks the cells above
  // the diagonal as masked.
  bool heatmap = false;
  bool causal = false;

  Step& show_heatmap(bool is_causal) {
    heatmap = true;
    causal = is_causal;
    return *this;
  }
};

// A module a lesson builds, as the book constructs it, with its parameter count.
struct ModuleInfo {
  std::string name;        // the book's variable: "ca", "mha", ...
  std::string code;        // "MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2)"
  std::size_t num_params;  // sum(p.numel() for p in module.parameters())
};

struct Trace {
  Trace(LessonInfo info, const Inputs& inputs);

  // Appends a step; the tensor is copied into the step's dynamic-rank storage.
  template <class E>
  Step& add(std::string id, std::string title, std::string explanation, std::string code, const E& tensor) {
    steps.push_back(Step{std::move(id), std::move(title), std::move(explanation), std::move(code), AnyTensor(tensor)});
    return steps.back();
  }
  // The step with this id; throws std::out_of_range if there is none.
  const Step& step(const std::string& id) const;

  LessonInfo info;
  nlohmann::ordered_json config;  // every effective option, "input" first
  std::vector<std::string> notes;  // context lines for the text header ("query: ...")
  std::vector<ModuleInfo> modules;
  bool show_inputs = true;          // false for reports that do not use the embeddings (gqa --kv-cache)
  nlohmann::ordered_json report;    // a lesson's non-tensor result (JSON key "report"); null when none
  Inputs inputs;
  std::vector<Step> steps;
};

// Options every lesson takes.
struct CommonOptions {
  std::string input;   // empty: the bundled journey.json
  std::string random;  // "NxD": torch.rand(N, D) after torch.manual_seed(0) instead of a file
  bool json = false;
  std::string color = "auto";    // never | auto | always
  std::string heatmap = "auto";  // never | auto | always
  bool pause = false;            // wait for Enter after each step (terminals only)
  bool quiet = false;            // only step ids and tensors
  bool explain = true;           // explanations and the book's code (--no-explain to hide)
};

// --input, --random and the output options, on a lesson or on `attn tour`.
void add_common_options(CLI::App* cmd, CommonOptions& common);

// The inputs the common options ask for: --random, --input, or the bundled file.
Inputs load_inputs(const CommonOptions& common);

using LessonFn = std::function<Trace(const Inputs&)>;

// Wires lessons into the CLI: each `add` makes a subcommand carrying the common options; the CLI
// runs the one the user picked.
class LessonRegistry {
 public:
  explicit LessonRegistry(CLI::App& app) : app_(app) {}

  CLI::App* add(const LessonInfo& info, LessonFn fn);

  struct Entry {
    LessonInfo info;
    CLI::App* command;
    LessonFn run;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  const CommonOptions& common() const { return common_; }

 private:
  CLI::App& app_;
  CommonOptions common_;
  std::vector<Entry> entries_;
};

// Option checks with messages a student can act on (CLI11's own would print the range as doubles and
// would read "-1" as a huge unsigned number).
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);  // "expected a whole number from min to max"

// Refuses a configuration whose tensor `what` would hold more than kMaxElements floats.
void check_elements(const std::string& what, std::initializer_list<std::size_t> shape);

// Options the module lessons share; each lesson registers the ones it has, with its book defaults.
struct ModuleOptions {
  std::size_t d_out = 2;
  std::size_t heads = 2;
  std::size_t kv_groups = 2;
  double dropout = 0.0;
  DropoutRng dropout_rng = DropoutRng::Default;
  std::optional<std::uint64_t> seed;  // replaces every torch.manual_seed value of the lesson
  bool qkv_bias = false;
  std::size_t batch = 2;
};
void add_d_out_option(CLI::App* cmd, std::size_t& d_out, const std::string& what);
void add_seed_option(CLI::App* cmd, std::optional<std::uint64_t>& seed, const std::string& book_seeds);
void add_qkv_bias_option(CLI::App* cmd, bool& qkv_bias);
void add_dropout_options(CLI::App* cmd, double& dropout, DropoutRng& rng, const std::string& what);
void add_batch_option(CLI::App* cmd, std::size_t& batch);
void add_heads_option(CLI::App* cmd, std::size_t& heads);
void add_kv_groups_option(CLI::App* cmd, std::size_t& kv_groups);
// The book's config values in the JSON "config" object, for the options a module lesson has.
void record_module_config(Trace& t, const ModuleOptions& opt, bool heads, bool kv_groups, bool dropout, bool batch);

// d_out divisible by --heads (and --heads by --kv-groups): otherwise a UsageError naming the options.
void check_heads(const ModuleOptions& opt, bool with_kv_groups);

// torch.stack([inputs] * b): the batch of the module lessons.
Tensor3 make_batch(const Matrix& inputs, std::size_t b);  // (b, num_tokens, d_in)
// make_batch, recorded as the lesson's "batch" step.
Tensor3 add_batch_step(Trace& t, const Matrix& inputs, std::size_t b);  // (b, num_tokens, d_in)

// A double as Python's repr prints it: 0.0, 0.5, 0.25.
std::string py_float(double v);

// 2360064 -> "2,360,064"
std::string with_commas(std::size_t n);

// `--query I` on a lesson that picks one query token; the lesson resolves it with effective_query.
void add_query_option(CLI::App* cmd, std::optional<std::size_t>& query);

// Token i's label for titles: 1 "journey".
std::string token_label(const Inputs& in, std::size_t i);

}  // namespace attn
