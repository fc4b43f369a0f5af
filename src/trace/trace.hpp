#pragma once
// What a lesson gives back, as plain data: a Trace, the ordered steps of one section of the book, and a
// Document, the traces of one run (one lesson, or every lesson for `attn tour`). Nothing here knows the
// command line; lessons fill traces and renderers (src/render) read them.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "io/embeddings.hpp"

namespace attn {

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
  // the diagonal as masked. `of_tokens`: rows are queries and columns keys, labelled by the tokens; false
  // for a matrix that is not attention between tokens (dropout on torch.ones), labelled by position.
  bool heatmap = false;
  bool causal = false;
  bool of_tokens = true;
  // The book's tensor has an integer dtype (torch.int64): printed and written as integers. The values are
  // whole numbers held as floats.
  bool integer = false;
  // The book's value is a Python float, not a tensor (row_2_sum): printed as Python prints it ("1.0") and
  // written to JSON as a double. `tensor` then holds it rounded to float32, shape ().
  std::optional<double> python_float;

  Step& show_heatmap(bool is_causal, bool tokens_on_axes = true) {
    heatmap = true;
    causal = is_causal;
    of_tokens = tokens_on_axes;
    return *this;
  }
  Step& as_integer() {
    integer = true;
    return *this;
  }
};

// Where a lesson is found: "book section 3.5.1, 3.5.3", or for a section of the book's repository
// ("ch04/04_gqa") "bonus material ch04/04_gqa in the book's repository".
std::string where_in_book(const LessonInfo& info);

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
    Step s;
    s.id = std::move(id);
    s.title = std::move(title);
    s.explanation = std::move(explanation);
    s.code = std::move(code);
    s.tensor = AnyTensor(tensor);
    steps.push_back(std::move(s));
    return steps.back();
  }
  // The step with this id; throws std::out_of_range if there is none.
  const Step& step(const std::string& id) const;
  bool has_step(const std::string& id) const;

  LessonInfo info;
  // The effective options (JSON key "config"). A lesson writes only what it derives (the query it
  // resolved, the torch.manual_seed values it used); the runner puts "input" and every option of the
  // lesson, from the option table, in front of those (lessons/registry.cpp).
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  std::vector<std::string> notes;  // context lines for the text header ("query: ...")
  std::vector<ModuleInfo> modules;
  bool show_inputs = true;         // false for reports that do not use the embeddings (gqa --kv-cache)
  nlohmann::ordered_json report;   // a lesson's non-tensor result (JSON key "report"); null when none
  Inputs inputs;
  std::vector<Step> steps;
};

// Everything one run prints: one trace for a lesson, every lesson's for `attn tour`. `only` lists the
// step ids asked for with --step (empty: every step); renderers show the others not at all.
struct Document {
  std::string command;  // "simple", ..., or "tour"
  std::vector<Trace> traces;
  std::vector<std::string> only;

  bool is_tour() const { return command == "tour"; }
  bool shows(const Step& step) const;
};

}  // namespace attn
