#pragma once
// What a lesson gives back: a Trace, the ordered steps of one section of the book. A lesson computes
// and never prints; the renderers (render/text, render/json) print and never compute.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
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
  Inputs inputs;
  std::vector<Step> steps;
};

// Options every lesson takes.
struct CommonOptions {
  std::string input;  // empty: the bundled journey.json
  bool json = false;
};

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
const CLI::Validator& whole_number();           // 0, 1, 2, ...
const CLI::Validator& positive_whole_number();  // 1, 2, 3, ...

// `--query I` on a lesson that picks one query token; the lesson resolves it with effective_query.
void add_query_option(CLI::App* cmd, std::optional<std::size_t>& query);

// Token i's label for titles: 1 "journey".
std::string token_label(const Inputs& in, std::size_t i);

}  // namespace attn
