// --format py and --format ipynb: the run as a Python script, or a Jupyter notebook (nbformat 4), that
// rebuilds it with PyTorch and prints what attn printed (docs/notebook.md). The cells, in order:
//   - what the file is, and for a dropout lesson which PyTorch builds draw the same masks;
//   - the imports, and the book's classes (data/notebook/classes.py; GPT-2's, data/notebook/gpt.py, for --model);
//   - per lesson: its inputs (a torch.tensor literal of the very float32 values attn used, unless the
//     lesson's first steps make them: --text, --model), the names its code uses (Section::notebook_setup),
//     then a markdown cell and a code cell per step: Step::run (or the step's code) and print(Step::show).
// A code cell's stored output is the step's value as attn prints it (value_text), so the notebook shows
// the results before it runs and running it shows the same. Nothing here computes attention: the values
// are the document's, the code the lessons' content.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "io/files.hpp"
#include "text/words.hpp"
#include "render/json.hpp"
#include "render/layout.hpp"
#include "render/renderer.hpp"

namespace attn {

namespace {

constexpr FileKind kNotebookCode{"the notebook's classes", std::size_t{1} << 20};

struct Cell {
  bool code = false;
  std::string source;  // markdown, or Python
  std::string output;  // a code cell's stored output: what it prints
  std::string plain;   // a markdown cell's words for the script's comments: its text from outside unescaped
};

std::string bundled_code(const std::string& name) {
  std::string text = read_bundled_file("notebook/" + name, kNotebookCode, "the notebook's code");
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// A float32 as a Python literal that reads back as the same float32 through torch.tensor (decimal to double,
// then double to float): the shortest form when it survives that double rounding, the double's otherwise.
std::string py_literal(float v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  std::string s = exact_number(v);
  if (static_cast<float>(std::strtod(s.c_str(), nullptr)) != v) s = py_float(static_cast<double>(v));
  if (s.find_first_of(".en") == std::string::npos) s += ".";  // a float literal, not an int
  return s;
}

// inputs = torch.tensor([...]) of the embeddings, one row per line, each row's token in a comment.
std::string inputs_literal(const Inputs& in) {
  std::string out = "inputs = torch.tensor(\n  [";
  const std::size_t n = in.num_tokens(), d = in.d_in();
  for (std::size_t i = 0; i < n; ++i) {
    out += i ? "   [" : "[";
    for (std::size_t j = 0; j < d; ++j) out += (j ? ", " : "") + py_literal(in.embeddings(i, j));
    out += i + 1 < n ? "]," : "]]";
    if (i < in.tokens.size()) out += std::string(i + 1 < n ? " " : "") + " # " + visible(token_repr(in.tokens[i]));
    out += "\n";
  }
  return out + ")  # (num_tokens, d_in)";
}

// Text from a lesson or from outside (a token, a file's name) as markdown that shows it as it is: every ASCII
// punctuation mark behind a backslash (CommonMark's escape, which any of them takes), so no link, autolink,
// image, tag, emphasis or maths ($) comes of it; control characters made visible.
std::string markdown_escaped(const std::string& text) {
  std::string out;
  for (char c : visible(text)) {
    if (std::ispunct(static_cast<unsigned char>(c))) out += '\\';
    out += c;
  }
  return out;
}

// Prose as markdown, and the same words as the script's comments show them (unescaped, made visible).
struct Prose {
  std::string markdown, plain;
  Prose& markup(const std::string& s) {  // attn's own words and markup: the same in both
    markdown += s;
    plain += s;
    return *this;
  }
  Prose& text(const std::string& s) {  // a lesson's words, which carry text from outside
    markdown += markdown_escaped(s);
    plain += visible(s);
    return *this;
  }
  Prose& then(const Prose& more) {  // a paragraph more
    markdown += "\n\n" + more.markdown;
    plain += "\n\n" + more.plain;
    return *this;
  }
  Cell cell() const { return {false, markdown, "", plain}; }
};

// The notebook's own words (data/lessons/shared.json, "notebook_*"), filled in: the values escaped for the
// markdown, as they are for the comments.
Prose notebook_words(const Words& words, const std::string& name, const TextValues& values = {},
                     const std::string& variant = "") {
  const Content& c = words.content("shared");
  const std::string path = "phrases/notebook_" + name;
  TextValues escaped = values, plain = values;
  for (auto& [key, value] : escaped) value = markdown_escaped(value);
  for (auto& [key, value] : plain) value = visible(value);
  return {words.fill_piece(c, path, variant, escaped), words.fill_piece(c, path, variant, plain)};
}

bool has_dropout(const Section& t) {
  const auto p = t.config.find("dropout");
  return p != t.config.end() && p->is_number() && p->get<double>() > 0;
}

std::string step_source(const Step& s) {
  std::string run = s.run ? *s.run : s.code;
  while (!run.empty() && run.back() == '\n') run.pop_back();
  return (run.empty() ? "" : run + "\n") + "print(" + (s.show.empty() ? s.id : s.show) + ")";
}

bool uses_model(const Document& doc) {
  for (const Section& t : doc.sections)
    if (t.inputs.model) return true;
  return false;
}

bool uses_gpt_classes(const Document& doc) {
  for (const Section& t : doc.sections)
    if (t.gpt_classes) return true;
  return false;
}

std::vector<Cell> cells_of(const Document& doc) {
  std::vector<Cell> cells;
  const Section& first = doc.sections.front();
  Prose intro = doc.is_tour() ? notebook_words(doc.words, "tour")
                              : notebook_words(doc.words, "lesson", {{"title", first.info.title}, {"lesson", first.info.name},
                                                 {"where", book_place(first.info, doc.words)}});
  intro.then(notebook_words(doc.words, "intro"));
  for (const Section& t : doc.sections)
    if (has_dropout(t)) {
      intro.then(notebook_words(doc.words, "dropout", {}, t.config.value("dropout_rng", std::string("default")) == "mkl" ? "mkl" : "default"));
      break;
    }
  cells.push_back(intro.cell());
  cells.push_back({true, bundled_code("imports.py"), "", ""});
  cells.push_back(notebook_words(doc.words, "classes").cell());
  cells.push_back({true, bundled_code("classes.py"), "", ""});
  if (uses_model(doc) || uses_gpt_classes(doc)) {
    cells.push_back(notebook_words(doc.words, uses_model(doc) ? "gpt" : "gpt_classes").cell());
    cells.push_back({true, bundled_code("gpt.py"), "", ""});
  }
  for (const Section& t : doc.sections) {
    if (doc.is_tour())
      cells.push_back(notebook_words(doc.words, "lesson_heading", {{"lesson", t.info.name}, {"title", t.info.title},
                                               {"where", book_place(t.info, doc.words)}}).cell());
    if (t.inputs.steps.empty() && t.show_inputs) {
      cells.push_back(notebook_words(doc.words, "inputs", {{"source", t.inputs.shown_source()}}).cell());
      cells.push_back({true, inputs_literal(t.inputs), "", ""});
    }
    const std::size_t total = t.steps.size();
    for (std::size_t i = 0; i < total; ++i) {
      // The lesson's names after the steps that make its inputs (--text, --model), which come first.
      if (i == t.inputs.steps.size() && !t.notebook_setup.empty()) cells.push_back({true, t.notebook_setup, "", ""});
      const Step& s = t.steps[i];
      Prose heading;
      heading.markup("**[" + std::to_string(i + 1) + "/" + std::to_string(total) + "] `" + s.id + "`: ");
      cells.push_back(heading.text(s.title).markup("**\n\n").text(s.explanation).cell());
      cells.push_back({true, step_source(s), value_text(s) + "\n", ""});
    }
  }
  return cells;
}

// Lines of `text` as nbformat keeps a multi-line string: each line but the last with its "\n".
nlohmann::ordered_json lines_of(const std::string& text) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::size_t stop = end == std::string::npos ? text.size() : end + 1;
    out.push_back(text.substr(start, stop - start));
    start = stop;
  }
  return out;
}

// Prose as Python comments, wrapped; a blank line of the prose is a bare "#".
std::string comment_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.empty()) out += "#\n";
    for (const std::string& w : wrap_words(visible(line), 98)) out += "# " + w + "\n";
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

class PyRenderer : public Renderer {
 public:
  explicit PyRenderer(bool notebook) : notebook_(notebook) {}

  void check(const Document& doc) const override {
    const std::string format = notebook_ ? "ipynb" : "py";
    if (!doc.only.empty())
      throw UsageError("--step and --format " + format + " exclude each other: a notebook runs every step in order");
    for (const Section& t : doc.sections)
      if (t.steps.empty())
        throw UsageError("--format " + format + " writes a lesson's steps, and attn " + t.info.name +
                         " here computes a report without steps: use --format text or json");
  }

  std::size_t working_bytes(const Document& doc) const override {
    std::size_t bytes = 0;
    for (const Section& t : doc.sections) {
      bytes = saturating_sum(bytes, t.inputs.embeddings.size() * 48);  // the literal, and its copy in JSON
      for (const Step& s : t.steps) bytes = saturating_sum(bytes, printed_tensor_bytes(s) * 3);
    }
    return bytes;
  }

  std::vector<Chunk> render(const Document& doc) const override {
    const std::vector<Cell> cells = cells_of(doc);
    return one_chunk(notebook_ ? ipynb(doc, cells) : script(cells));
  }

 private:
  static std::string script(const std::vector<Cell>& cells) {
    std::string out = "#!/usr/bin/env python3\n";
    for (const Cell& c : cells) {
      out += c.code ? c.source + "\n\n" : comment_lines(c.plain);
    }
    return out;
  }

  static std::string ipynb(const Document& doc, const std::vector<Cell>& cells) {
    using ojson = nlohmann::ordered_json;
    ojson list = ojson::array();
    int count = 0;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Cell& c = cells[i];
      ojson cell{{"cell_type", c.code ? "code" : "markdown"}, {"id", "cell-" + std::to_string(i)}};
      if (c.code) {
        cell["execution_count"] = ++count;
        cell["metadata"] = ojson::object();
        ojson outputs = ojson::array();
        if (!c.output.empty())
          outputs.push_back({{"name", "stdout"}, {"output_type", "stream"}, {"text", lines_of(c.output)}});
        cell["outputs"] = outputs;
      } else {
        cell["metadata"] = ojson::object();
      }
      cell["source"] = lines_of(c.source);
      list.push_back(cell);
    }
    ojson config = ojson::array();
    for (const Section& t : doc.sections) config.push_back({{"lesson", t.info.name}, {"config", t.config}});
    ojson nb{{"cells", list},
             {"metadata",
              {{"kernelspec", {{"display_name", "Python 3"}, {"language", "python"}, {"name", "python3"}}},
               {"language_info", {{"name", "python"}}},
               {"attn", {{"command", doc.command}, {"lessons", config}}}}},
             {"nbformat", 4},
             {"nbformat_minor", 5}};
    // Written as the JSON format writes its strings: a path from outside that is not UTF-8 (the
    // configuration's input or model) with U+FFFD, a --text's DEL or C1 control escaped.
    return json_text(nb, 1) + "\n";
  }

  bool notebook_;
};

}  // namespace

std::unique_ptr<Renderer> make_py_renderer(const RenderOptions&) { return std::make_unique<PyRenderer>(false); }
std::unique_ptr<Renderer> make_ipynb_renderer(const RenderOptions&) { return std::make_unique<PyRenderer>(true); }

}  // namespace attn
