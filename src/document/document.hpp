#pragma once
// What a run gives its renderers, as plain data and nothing else: the Steps of each lesson, a Section (one
// lesson's steps, notes, modules and inputs, once computed) and the Document (the sections of one run: one
// lesson, or every lesson for `attn tour`), in the run's Words. No graph and no computation is here: the
// lessons fill sections through a Trace (trace/trace.hpp), which is a Section with the nodes that compute it;
// the renderers (src/render), the presenter (src/present) and attn serve read only this header.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "document/inputs.hpp"
#include "text/words.hpp"

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
  // The step as a notebook cell (--format py, ipynb; render/notebook.cpp): `run` is the Python that computes
  // it when the cells run in order (none: `code` runs as it is; "": nothing left to run), `show` the
  // expression print() shows ("": the id).
  std::optional<std::string> run;
  std::string show;
  AnyTensor tensor;         // float32, rank 0-4
  // A weight matrix (..., n, n) the text view may also draw as a heatmap; `causal` marks the cells above
  // the diagonal as masked. `of_tokens`: rows are queries and columns keys, labelled by the tokens; false
  // for a matrix that is not attention between tokens (dropout on torch.ones), labelled by position.
  bool heatmap = false;
  bool causal = false;
  bool of_tokens = true;
  // The matrix's rows are the queries at positions first_query, first_query + 1, ... and its columns the
  // keys from position 0: a KV-cache call's (num_tokens_Q, num_tokens_K) weights. 0 for a square matrix.
  std::size_t first_query = 0;
  // Every head of one layer at a glance (attn heads, bertviz's model view): the tensor is (heads, rows, keys),
  // not (b, rows, keys), and is drawn as a grid of its heads (with the following overview steps, as the
  // model view: a row of small colour-only maps per layer).
  bool overview = false;
  // Under each head's map, a few words on what the head mostly does ("previous token", "first token",
  // "self"), computed by the lesson from the weights when the step is computed: empty, or one per head.
  std::vector<std::string> head_notes;
  // The book's tensor has an integer dtype (torch.int64): printed and written as integers. The values are
  // whole numbers held as floats.
  bool integer = false;
  // The book's value is a Python float, not a tensor (row_2_sum): printed as Python prints it ("1.0") and
  // written to JSON as a double. `tensor` then holds it rounded to float32, shape ().
  std::optional<double> python_float;
  // The book's value is a Python int (sum(p.numel() for p in mha.parameters())): printed and written
  // exactly, however large. `tensor` then holds it as a float32, shape ().
  std::optional<std::int64_t> python_int;
  // The tensor's shape, known before it is computed (a step not shown is never computed: its `tensor`
  // stays empty, its shape does not). Renderers and limits read this.
  std::vector<std::size_t> shape;
  bool computed = false;  // `tensor` holds the step's value (false: not shown, so never computed)
  std::size_t numel() const;

  Step& show_heatmap(bool is_causal, bool tokens_on_axes = true) {
    heatmap = true;
    causal = is_causal;
    of_tokens = tokens_on_axes;
    return *this;
  }
  // A heatmap of query rows from position `first` on, against keys from position 0 (of tokens).
  Step& show_heatmap_from(std::size_t first, bool is_causal) {
    show_heatmap(is_causal);
    first_query = first;
    return *this;
  }
  Step& as_integer() {
    integer = true;
    return *this;
  }
};

// Where a lesson is found: "book section 3.5.1, 3.5.3", or for a section of the book's repository
// ("ch04/04_gqa") "bonus material ch04/04_gqa in the book's repository": in English (--help, the man page),
// and in the words of a run (book_place).
std::string where_in_book(const LessonInfo& info);
std::string book_place(const LessonInfo& info, const Words& words);

// A module a lesson builds, as the book constructs it, with its parameter count.
struct ModuleInfo {
  std::string name;        // the book's variable: "ca", "mha", ...
  std::string code;        // "MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=2)"
  std::size_t num_params;  // sum(p.numel() for p in module.parameters())
};

// A table among a lesson's notes, as data (kv-cache --estimate's MHA and GQA rows). The renderers lay it out
// (render/layout.hpp, note_lines) after the first `at` notes: the first column left-aligned, the others
// right-aligned, each in its `widths` (the widest a cell can be: 26 for a byte count up to 2^64 with commas).
struct NoteTable {
  std::size_t at = 0;
  std::vector<std::size_t> widths;
  std::vector<std::string> header;             // one per column
  std::vector<std::vector<std::string>> rows;  // one cell per column
};

// One lesson of a run, computed: what a lesson's Trace holds once resolve() has computed its shown steps,
// without the nodes. Its words are the run's (Words), and `only` the ids --step shows (empty: every step).
struct Section {
  LessonInfo info;
  // The effective options (JSON key "config"). A lesson writes only what it derives (the query it
  // resolved, the torch.manual_seed values it used); the runner puts "input" and every option of the
  // lesson, from the option table, in front of those (run/run.cpp, with the options the caller gives).
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  std::vector<std::string> notes;  // context lines for the text header ("query: ...")
  std::optional<NoteTable> note_table;  // a table among the notes: data, laid out by the renderers
  std::vector<ModuleInfo> modules;
  // The notebook's setup of the lesson (--format py, ipynb): Python that names what its code uses (d_in,
  // d_out, num_heads, ...), run after the inputs and before the first step.
  std::string notebook_setup;
  bool show_inputs = true;         // false for reports that do not use the embeddings (gqa --kv-cache)
  // Its code uses chapter 4's classes (LayerNorm, GELU, FeedForward, TransformerBlock, GPTModel): the notebook
  // defines them (data/notebook/gpt.py), as it does for --model.
  bool gpt_classes = false;
  nlohmann::ordered_json report;   // a lesson's non-tensor result (JSON key "report"); null when none
  Inputs inputs;
  std::vector<Step> steps;
  std::vector<std::string> only;  // the --step ids shown; empty: every step
  Words words;                    // the language of its words

  // The step with this id; throws std::out_of_range if there is none.
  const Step& step(const std::string& id) const;
  bool has_step(const std::string& id) const;
  // Whether the step `id` is shown (--step lists it, or lists none).
  bool shows(const std::string& id) const;
  // The words a section holds: its tokens' text, its steps' ids, titles, explanations and code (thousands of
  // steps for kv-cache on a long input), for the memory budget.
  std::size_t text_bytes() const;
  // What the section keeps until the output is written: its inputs, its words and its shown steps' values.
  std::size_t shown_bytes() const;
};

// Everything one run prints: one section for a lesson, every lesson's for `attn tour`. `only` lists the
// step ids asked for with --step (empty: every step); renderers show the others not at all.
struct Document {
  std::string command;  // "simple", ..., or "tour"
  std::vector<Section> sections;
  std::vector<std::string> only;
  Words words;  // the words' language: the renderers' words follow it

  bool is_tour() const { return command == "tour"; }
  bool shows(const Step& step) const;
};

}  // namespace attn
