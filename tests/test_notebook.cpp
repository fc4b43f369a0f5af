// --format ipynb and --format py (docs/notebook.md): the run as a notebook and a script a student reruns with
// PyTorch. The suite needs no PyTorch: tests/golden/notebooks.py ran every configuration of its record with
// PyTorch, cell by cell and as a script, and recorded what it printed and a hash of the code it ran
// (tests/golden/notebooks/record.json); each configuration here is a case of its own that asks attn for the
// same notebook and holds it to that record, to nbformat 4.5's structure and to the script. Then, with
// python3 but no PyTorch (docs tier), every code cell of every lesson's notebook and the tour's parses and
// uses only names earlier cells made; the usage errors; and, where python3-torch is installed (torch tier),
// the generator's own check, which runs every notebook and script again.
#include <cctype>
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "text/words.hpp"
#include "lessons/registry.hpp"
#include "support.hpp"

using json = nlohmann::json;

namespace {

const std::string kRecord = "tests/golden/notebooks/record.json";

// One configuration of the record: attn's arguments (a model named as tests/golden/models/<name>), and how
// a test name shows them.
struct Recorded {
  std::vector<std::string> args;
  std::vector<std::string> model_dirs;  // the directories given to --model, written MODEL in the hash
  std::string shown;
  json record;
};

// The record's configurations; none, or no record, is an error (a case that fails saying so), never a
// suite with nothing to check.
std::vector<Recorded> read_record() {
  std::ifstream in(ATTN_SOURCE_DIR "/" + kRecord);
  if (!in.good()) throw std::runtime_error("cannot read " + kRecord + " (/usr/bin/python3 tests/golden/notebooks.py writes it)");
  const json doc = json::parse(in);
  std::vector<Recorded> out;
  for (const auto& c : doc.at("configurations")) {
    Recorded r;
    r.shown = "attn";
    for (const auto& a : c.at("args")) {
      std::string arg = a;
      // A comma or semicolon would split the test's name (Catch2's test spec, CMake's list).
      // As test_golden.cpp shows it: in double quotes when it holds a ', in single quotes when it holds a space.
      const std::string word = std::regex_replace(arg, std::regex("[,;]"), "");
      r.shown += " " + (word.find('\'') != std::string::npos ? "\"" + word + "\""
                        : word.find(' ') != std::string::npos ? "'" + word + "'" : word);
      if (arg.rfind("tiny-", 0) == 0) {
        arg = ATTN_TESTS_DIR "/golden/models/" + arg;
        r.model_dirs.push_back(arg);
      }
      r.args.push_back(arg);
    }
    r.record = c;
    out.push_back(r);
  }
  if (out.empty()) throw std::runtime_error(kRecord + " holds no configuration");
  return out;
}

const std::vector<Recorded>& recorded() {
  static const std::vector<Recorded> all = read_record();
  return all;
}

std::vector<std::string> with(std::vector<std::string> args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more);
  return args;
}

// nbformat's multi-line string as a notebook keeps it: an array of strings, each line but the last ending in
// its "\n" and none holding another. Returns the text joined, or says what is wrong in `problems`.
std::string lines_text(const json& lines, const std::string& where, std::vector<std::string>& problems) {
  if (!lines.is_array()) {
    problems.push_back(where + ": not an array of strings");
    return "";
  }
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].is_string()) {
      problems.push_back(where + ": line " + std::to_string(i) + " is not a string");
      continue;
    }
    const std::string line = lines[i];
    const std::size_t nl = line.find('\n');
    if (nl != std::string::npos && nl + 1 != line.size())
      problems.push_back(where + ": line " + std::to_string(i) + " holds a line break before its end");
    if (i + 1 < lines.size() && nl == std::string::npos)
      problems.push_back(where + ": line " + std::to_string(i) + " does not end with its line break");
    text += line;
  }
  return text;
}

std::set<std::string> keys_of(const json& j) {
  std::set<std::string> keys;
  for (const auto& item : j.items()) keys.insert(item.key());
  return keys;
}

// What a notebook breaks of nbformat 4.5's schema (nbformat.v4.5.schema.json, the parts attn writes): the
// top level, each cell's type, id (unique, 1 to 64 of [a-zA-Z0-9-_]), metadata and source, a markdown cell's
// keys and a code cell's (execution_count counting 1, 2, ... as "run all" leaves them; outputs that are
// stdout streams). Empty when it breaks nothing.
std::vector<std::string> notebook_problems(const json& nb) {
  std::vector<std::string> problems;
  if (!nb.is_object()) return {"not a JSON object"};
  if (keys_of(nb) != std::set<std::string>{"cells", "metadata", "nbformat", "nbformat_minor"})
    problems.push_back("top level: keys other than cells, metadata, nbformat, nbformat_minor");
  if (nb.value("nbformat", json()) != 4 || nb.value("nbformat_minor", json()) != 5)
    problems.push_back("not nbformat 4.5");
  const json metadata = nb.value("metadata", json());
  if (!metadata.is_object()) problems.push_back("metadata: not an object");
  else if (metadata.contains("kernelspec") &&
           !(metadata["kernelspec"].value("name", json()).is_string() &&
             metadata["kernelspec"].value("display_name", json()).is_string()))
    problems.push_back("metadata.kernelspec: no name or display_name");
  const json cells = nb.value("cells", json());
  if (!cells.is_array() || cells.empty()) {
    problems.push_back("cells: not a non-empty array");
    return problems;
  }
  const std::regex id_form("^[a-zA-Z0-9-_]{1,64}$");
  std::set<std::string> ids;
  int count = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const json& c = cells[i];
    const std::string where = "cell " + std::to_string(i);
    if (!c.is_object()) {
      problems.push_back(where + ": not an object");
      continue;
    }
    const json id = c.value("id", json());
    if (!id.is_string() || !std::regex_match(id.get<std::string>(), id_form))
      problems.push_back(where + ": id is not 1 to 64 of [a-zA-Z0-9-_]");
    else if (!ids.insert(id.get<std::string>()).second)
      problems.push_back(where + ": id " + id.get<std::string>() + " is not unique");
    if (!c.value("metadata", json()).is_object()) problems.push_back(where + ": metadata is not an object");
    lines_text(c.value("source", json()), where + " source", problems);
    const json type = c.value("cell_type", json());
    if (type == "markdown") {
      if (keys_of(c) != std::set<std::string>{"cell_type", "id", "metadata", "source"})
        problems.push_back(where + ": a markdown cell with keys other than cell_type, id, metadata, source");
    } else if (type == "code") {
      if (keys_of(c) != std::set<std::string>{"cell_type", "id", "metadata", "source", "execution_count", "outputs"})
        problems.push_back(where + ": a code cell with keys other than cell_type, id, metadata, source, "
                                   "execution_count, outputs");
      if (c.value("execution_count", json()) != ++count)
        problems.push_back(where + ": execution_count is not " + std::to_string(count));
      const json outputs = c.value("outputs", json());
      if (!outputs.is_array()) {
        problems.push_back(where + ": outputs is not an array");
        continue;
      }
      for (const auto& o : outputs) {
        if (!o.is_object() || keys_of(o) != std::set<std::string>{"output_type", "name", "text"} ||
            o["output_type"] != "stream" || o["name"] != "stdout")
          problems.push_back(where + ": an output that is not a stdout stream");
        else
          lines_text(o["text"], where + " output", problems);
      }
    } else {
      problems.push_back(where + ": cell_type is neither markdown nor code");
    }
  }
  return problems;
}

std::string joined(const json& lines) {
  std::string text;
  for (const auto& l : lines) text += l.get<std::string>();
  return text;
}

// Markdown as it reads: CommonMark's backslash escapes of punctuation (attn escapes text from outside) undone.
std::string unescaped(const std::string& markdown) {
  std::string out;
  for (std::size_t i = 0; i < markdown.size(); ++i) {
    if (markdown[i] == '\\' && i + 1 < markdown.size() && std::ispunct(static_cast<unsigned char>(markdown[i + 1]))) ++i;
    out += markdown[i];
  }
  return out;
}

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// What the script does other than the notebook: after its "#!" line, each code cell's source verbatim, in
// the notebook's order, and between them only comment lines ("#", "# ...") and blank lines whose words are
// the markdown cells' between those code cells, in order. Empty when it does nothing else.
std::vector<std::string> script_problems(const std::string& script, const json& nb) {
  std::vector<std::string> problems;
  if (script.rfind("#!", 0) != 0) problems.push_back("the script does not start with a #! line");
  std::size_t at = script.find('\n') == std::string::npos ? script.size() : script.find('\n') + 1;
  std::vector<std::string> prose;  // the markdown's words since the last code cell
  auto prose_between = [&](std::size_t from, std::size_t to, const std::string& where) {
    std::istringstream in(script.substr(from, to - from));
    std::string comments;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line == "#") continue;
      if (line.rfind("# ", 0) != 0) problems.push_back(where + ": a line that is neither a comment nor code: " + line);
      else comments += line.substr(2) + "\n";
    }
    if (words_of(comments) != prose) problems.push_back(where + ": the comments are not the markdown cells' words");
    prose.clear();
  };
  std::size_t code_cells = 0;
  for (const auto& c : nb.at("cells")) {
    const std::string source = joined(c.at("source"));
    if (c.at("cell_type") == "markdown") {
      for (auto& w : words_of(unescaped(source))) prose.push_back(w);
      continue;
    }
    const std::string where = "code cell " + std::to_string(++code_cells);
    const std::size_t found = script.find(source, at);
    if (found == std::string::npos) {
      problems.push_back(where + ": not in the script after the cell before it");
      continue;
    }
    prose_between(at, found, "before " + where);
    at = found + source.size();
  }
  prose_between(at, script.size(), "after the last code cell");
  return problems;
}

// The kernels' variant of the record: what PyTorch printed with OpenBLAS's SkylakeX kernels where that
// differed from Haswell's (the record's own fields), as attn computes on the kernels this process runs.
const json& expected_of(const json& record) {
  const auto sky = record.find("skylakex");
  return attn_test::skylakex_kernels() && sky != record.end() ? *sky : record;
}

// One configuration: its notebook and script against the record, nbformat's structure and each other.
void check_configuration(const Recorded& c) {
  INFO(c.shown << " (OpenBLAS core " << attn_test::blas_core() << ")");
  const attn_test::Run nb_run = attn_test::run(with(c.args, {"--format", "ipynb"}));
  INFO(nb_run.err);
  REQUIRE(nb_run.status == 0);
  CHECK(nb_run.err.empty());
  const json nb = json::parse(nb_run.out);
  const std::vector<std::string> problems = notebook_problems(nb);
  for (const auto& p : problems) FAIL_CHECK(p);
  REQUIRE(problems.empty());

  std::string code, printed;  // the code cells joined with "\n", as the generator hashed them
  std::vector<std::string> outputs;
  bool first = true;
  for (const auto& cell : nb.at("cells")) {
    if (cell.at("cell_type") != "code") continue;
    code += (first ? "" : "\n") + joined(cell.at("source"));
    first = false;
    for (const auto& o : cell.at("outputs")) {
      outputs.push_back(joined(o.at("text")));
      printed += outputs.back();
    }
  }
  // The code PyTorch ran, byte for byte (the model's directory aside: the checkout may be anywhere).
  for (const auto& dir : c.model_dirs) {
    CHECK(code.find(dir) != std::string::npos);  // the notebook loads the model given, from where it was given
    const std::string word = "MODEL";
    for (std::size_t at = code.find(dir); at != std::string::npos; at = code.find(dir, at + word.size()))
      code.replace(at, dir.size(), word);
  }
  const json& expected = expected_of(c.record);
  CHECK(attn::text_hash(code) == expected.at("code_hash").get<std::string>());
  // What attn stored is what PyTorch printed running that code.
  CHECK(printed == expected.at("printed").get<std::string>());
  CHECK(!outputs.empty());
  // And what attn prints: each stored output in the text view of the same run, in order.
  const attn_test::Run text = attn_test::run(with(c.args, {"--color", "never"}));
  REQUIRE(text.status == 0);
  std::size_t at = 0;
  for (const auto& out : outputs) {
    const std::string tensor = out.substr(0, out.find_last_not_of('\n') + 1);
    INFO("a stored output attn's text view does not print (after the one before it):\n" << tensor);
    const std::size_t found = text.out.find(tensor, at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found + tensor.size();
  }

  const attn_test::Run py = attn_test::run(with(c.args, {"--format", "py"}));
  INFO(py.err);
  REQUIRE(py.status == 0);
  for (const auto& p : script_problems(py.out, nb)) FAIL_CHECK(p);
}

// One case per configuration of the record, registered when the program starts ("notebook 03: attn simple
// --query 3"), so that a failure names its configuration.
const bool registered_configurations = [] {
  attn_test::register_cases_from(kRecord, [] {
    const auto& all = recorded();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const std::string n = std::to_string(i), number = std::string(n.size() < 2 ? 2 - n.size() : 0, '0') + n;
      attn_test::register_case("notebook " + number + ": " + all[i].shown, "[notebook]",
                               [i] { check_configuration(recorded().at(i)); });
    }
  });
  return true;
}();

json minimal_notebook() {
  return json::parse(R"NB({"cells": [
      {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "\n", "Some words."]},
      {"cell_type": "code", "id": "c-1", "execution_count": 1, "metadata": {}, "source": ["x = 1\n", "print(x)"],
       "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5})NB");
}

}  // namespace

TEST_CASE("notebook: the structure check and the script check find what is wrong", "[notebook]") {
  // Each can fail: a notebook that breaks one rule, for every rule, is named for that rule.
  const json good = minimal_notebook();
  CHECK(notebook_problems(good).empty());
  const std::vector<std::pair<std::string, std::function<void(json&)>>> breaks = {
      {"not nbformat 4.5", [](json& nb) { nb["nbformat_minor"] = 4; }},
      {"top level: keys other", [](json& nb) { nb["extra"] = 1; }},
      {"cells: not a non-empty array", [](json& nb) { nb["cells"] = json::array(); }},
      {"cell 1: id is not", [](json& nb) { nb["cells"][1]["id"] = "cell 1"; }},
      {"cell 1: id is not", [](json& nb) { nb["cells"][1]["id"] = std::string(65, 'a'); }},
      {"cell 1: id intro is not unique", [](json& nb) { nb["cells"][1]["id"] = "intro"; }},
      {"cell 0: metadata is not an object", [](json& nb) { nb["cells"][0]["metadata"] = json::array(); }},
      {"cell 0 source: not an array of strings", [](json& nb) { nb["cells"][0]["source"] = "# Title"; }},
      {"cell 0 source: line 0 does not end", [](json& nb) { nb["cells"][0]["source"][0] = "# Title"; }},
      {"cell 0 source: line 0 holds a line break", [](json& nb) { nb["cells"][0]["source"][0] = "a\nb\n"; }},
      {"cell 0: a markdown cell with keys other", [](json& nb) { nb["cells"][0]["outputs"] = json::array(); }},
      {"cell 1: a code cell with keys other", [](json& nb) { nb["cells"][1]["attachments"] = json::object(); }},
      {"cell 1: execution_count is not 1", [](json& nb) { nb["cells"][1]["execution_count"] = 2; }},
      {"cell 1: an output that is not a stdout stream", [](json& nb) { nb["cells"][1]["outputs"][0]["name"] = "stderr"; }},
      {"cell 1: cell_type is neither", [](json& nb) { nb["cells"][1]["cell_type"] = "raw"; }},
      {"metadata.kernelspec: no name", [](json& nb) { nb["metadata"]["kernelspec"].erase("name"); }},
  };
  for (const auto& [problem, change] : breaks) {
    json nb = good;
    change(nb);
    const auto found = notebook_problems(nb);
    INFO(problem << " in " << nb.dump());
    REQUIRE(found.size() == 1);
    CHECK_THAT(found[0], Catch::StartsWith(problem));
  }
  // The script: the code verbatim and in order, the markdown's words as comments, nothing else.
  const std::string script = "#!/usr/bin/env python3\n# # Title\n#\n# Some words.\nx = 1\nprint(x)\n\n";
  CHECK(script_problems(script, good).empty());
  CHECK_THAT(script_problems("# # Title\n#\n# Some words.\nx = 1\nprint(x)\n", good).at(0), Catch::Contains("#! line"));
  CHECK_THAT(script_problems("#!\n# # Title\n# Some\nx = 1\nprint(x)\n", good).at(0), Catch::Contains("markdown cells' words"));
  CHECK_THAT(script_problems("#!\n# # Title\n# Some words.\nx = 2\nprint(x)\n", good).at(0), Catch::Contains("not in the script"));
  CHECK_THAT(script_problems("#!\n# # Title\n# Some words.\ny = 0\nx = 1\nprint(x)\n", good).at(0),
             Catch::Contains("neither a comment nor code: y = 0"));
  CHECK_THAT(script_problems(script + "z = 3\n", good).at(0), Catch::Contains("after the last code cell"));
}

TEST_CASE("notebook: the record runs every lesson with its defaults, the tour, and --text, --random and --model",
          "[notebook]") {
  std::set<std::vector<std::string>> configurations;
  std::set<std::string> options;
  for (const auto& c : recorded()) {
    configurations.insert(c.record.at("args").get<std::vector<std::string>>());
    for (const auto& a : c.args) options.insert(a);
    // The record's fields, each variant's too.
    for (const json* r : {&c.record, c.record.contains("skylakex") ? &c.record.at("skylakex") : nullptr}) {
      if (r == nullptr) continue;
      INFO(c.shown);
      CHECK(std::regex_match(r->at("code_hash").get<std::string>(), std::regex("^[0-9a-f]{16}$")));
      CHECK(!r->at("printed").get<std::string>().empty());
    }
    if (c.record.contains("skylakex")) CHECK(c.record.at("skylakex") != json({{"code_hash", c.record.at("code_hash")}, {"printed", c.record.at("printed")}}));
  }
  for (const auto& name : attn_test::lesson_names()) {
    INFO("the record has no run of attn " << name << " with its defaults (tests/golden/notebooks.py)");
    CHECK(configurations.count({name}) == 1);
  }
  CHECK(configurations.count({"tour"}) == 1);
  for (const char* option : {"--text", "--random", "--model", "--seed", "--dropout"}) {
    INFO(option);
    CHECK(options.count(option) == 1);
  }
}

TEST_CASE("notebook: --step, and a lesson mode that computes a report, are usage errors", "[notebook]") {
  // Every lesson mode of the registry: one whose run has steps writes a notebook; one that computes a report
  // (kv-cache --estimate, gqa --kv-cache) is refused with one line, exit 2, nothing on stdout.
  std::size_t reports = 0, with_steps = 0;
  for (const attn::Lesson& lesson : attn::lessons())
    for (const attn::LessonMode& mode : lesson.modes) {
      std::vector<std::string> args{lesson.info.name};
      if (mode.selector) args.push_back(attn::lesson_option(*mode.selector).name);
      const attn_test::Run json_run = attn_test::run(with(args, {"--json"}));
      INFO(args.back() << ": " << json_run.err);
      REQUIRE(json_run.status == 0);
      const json steps = json::parse(json_run.out).at("steps");
      for (const std::string format : {"py", "ipynb"}) {
        const attn_test::Run r = attn_test::run(with(args, {"--format", format}));
        INFO("attn " << args[0] << " " << args.back() << " --format " << format);
        if (!steps.empty()) {
          CHECK(r.status == 0);
          continue;
        }
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err == "attn: --format " + format + " writes a lesson's steps, and attn " + args[0] +
                           " here computes a report without steps: use --format text or json (see 'attn " + args[0] +
                           " --help')\n");
      }
      (steps.empty() ? reports : with_steps) += 1;
      if (steps.empty()) continue;
      // --step: a notebook runs every step in order, so one step alone is refused, whichever.
      const std::string step = steps.at(steps.size() / 2).at("id");
      for (const std::string format : {"py", "ipynb"}) {
        const attn_test::Run r = attn_test::run(with(args, {"--format", format, "--step", step}));
        INFO("attn " << args[0] << " --format " << format << " --step " << step);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err == "attn: --step and --format " + format +
                           " exclude each other: a notebook runs every step in order (see 'attn " + args[0] + " --help')\n");
      }
    }
  CHECK(reports > 0);  // some mode computes a report (kv-cache --estimate, gqa --kv-cache): its refusal was seen
  CHECK(with_steps == attn_test::lesson_names().size());
}

namespace {

// The dependency check: every code cell of each notebook parses (ast), and every name a cell reads where it
// runs (module level, a class body, a default, a decorator, a comprehension's first iterable) was bound by
// an earlier cell or earlier in the same cell, or is a builtin. A function's body runs when it is called,
// so its names are not counted; names a cell binds only inside a function, a class body or a comprehension
// do not reach the next cell. Prints "FILE cell N: ..." for each problem, then "checked K cells".
const char* kDependencyCheck = R"PY(
import ast, builtins, json, sys

class Reads(ast.NodeVisitor):
    def __init__(self, bound):
        self.bound, self.missing = bound, []
    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self.bound.add(node.id)
        elif node.id not in self.bound:
            self.missing.append("%s (line %d)" % (node.id, node.lineno))
        elif isinstance(node.ctx, ast.Del):
            self.bound.discard(node.id)
    def visit_Assign(self, node):
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)
    def visit_AnnAssign(self, node):
        if node.value:
            self.visit(node.value)
        self.visit(node.annotation)
        self.visit(node.target)
    def visit_AugAssign(self, node):
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.visit(ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target))
        self.visit(node.target)
    def visit_NamedExpr(self, node):
        self.visit(node.value)
        self.visit(node.target)
    def visit_For(self, node):
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in node.body + node.orelse:
            self.visit(stmt)
    def visit_Import(self, node):
        for alias in node.names:
            self.bound.add(alias.asname or alias.name.split(".")[0])
    def visit_ImportFrom(self, node):
        for alias in node.names:
            if alias.name == "*":
                self.missing.append("from %s import * (line %d)" % (node.module, node.lineno))
            self.bound.add(alias.asname or alias.name)
    def definition(self, node):  # what runs when a def or lambda runs: decorators and defaults, not the body
        for expr in getattr(node, "decorator_list", []) + node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(expr)
    def visit_FunctionDef(self, node):
        self.definition(node)
        self.bound.add(node.name)
    visit_AsyncFunctionDef = visit_FunctionDef
    def visit_Lambda(self, node):
        self.definition(node)
    def visit_ClassDef(self, node):
        for expr in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(expr)
        outer = self.bound
        self.bound = set(outer)  # the class body's names stay in the class
        for stmt in node.body:
            self.visit(stmt)
        self.bound = outer
        self.bound.add(node.name)
    def comprehension(self, node, results):
        self.visit(node.generators[0].iter)  # run where the comprehension is
        outer = self.bound
        self.bound = set(outer)  # its variables stay in it
        for i, gen in enumerate(node.generators):
            if i:
                self.visit(gen.iter)
            self.visit(gen.target)
            for cond in gen.ifs:
                self.visit(cond)
        for expr in results:
            self.visit(expr)
        self.bound = outer
    def visit_ListComp(self, node):
        self.comprehension(node, [node.elt])
    visit_SetComp = visit_GeneratorExp = visit_ListComp
    def visit_DictComp(self, node):
        self.comprehension(node, [node.key, node.value])
    def visit_ExceptHandler(self, node):
        if node.type:
            self.visit(node.type)
        if node.name:
            self.bound.add(node.name)
        for stmt in node.body:
            self.visit(stmt)

cells = 0
for path in sys.argv[1:]:
    nb = json.load(open(path))
    reads = Reads(set(dir(builtins)) | {"__name__"})
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        cells += 1
        source = "".join(cell["source"])
        try:
            tree = ast.parse(source)
        except SyntaxError as e:
            print("%s cell %d: does not parse: %s (line %s)" % (path, i, e.msg, e.lineno))
            continue
        reads.missing = []
        reads.visit(tree)
        for name in reads.missing:
            print("%s cell %d: reads %s before any cell binds it" % (path, i, name))
print("checked", cells, "cells")
)PY";

}  // namespace

TEST_CASE("notebook: the code cells of every lesson's notebook and the tour's and the record's parse and read only names earlier cells made",
          "[docs]") {
  const attn_test::Scratch dir;
  // A notebook that breaks each rule, first: the check must name every one of them, so it can fail.
  json bad = minimal_notebook();
  const std::vector<std::string> bad_cells = {
      "print(later)",                               // bound by the next cell only
      "later = 1\ndef f():\n    inner = 2\n    return undefined_at_call_is_not_counted",
      "print(inner)",                               // bound only inside a function
      "squares = [k * k for k in range(3)]\nprint(k)",  // a comprehension's variable stays in it
      "class C:\n    member = 1\nprint(member)",     // so does a class body's name
      "total += 1",                                 // augmented: read before it is bound
      "print(torch.tensor([1.]))\nimport torch",    // used before its import
      "print(mha.heads.0.W_query.weight)",          // issue 29's line: not Python
      "for j in range(2):\n    print(j)\nprint(later, f, squares, C, j, len)",  // all bound: no problem
  };
  for (const auto& source : bad_cells) {
    json cell = bad["cells"][1];
    cell["id"] = "bad-" + std::to_string(bad["cells"].size());
    cell["source"] = json::array({source});
    bad["cells"].push_back(cell);
  }
  std::vector<std::string> files{dir.file("bad.ipynb", bad.dump())};
  std::size_t code_cells = 1 + bad_cells.size();
  // Then every lesson of the registry with its defaults, the tour, and the record's other configurations
  // (--text, --random, --model, ...).
  std::vector<std::vector<std::string>> runs;
  for (const auto& name : attn_test::lesson_names()) runs.push_back({name});
  runs.push_back({"tour"});
  for (const auto& c : recorded())
    if (std::find(runs.begin(), runs.end(), c.args) == runs.end()) runs.push_back(c.args);
  for (const auto& args : runs) {
    const attn_test::Run r = attn_test::run(with(args, {"--format", "ipynb"}));
    std::string shown = "attn";
    for (const auto& a : args) shown += " " + a;
    INFO(shown << " --format ipynb: " << r.err);
    REQUIRE(r.status == 0);
    const json nb = json::parse(r.out);
    for (const auto& cell : nb.at("cells")) code_cells += cell.at("cell_type") == "code" ? 1 : 0;
    files.push_back(dir.file(std::to_string(files.size()) + "-" + args[0] + ".ipynb", r.out));
  }
  std::string command = "/usr/bin/python3 -c " + attn_test::quote(kDependencyCheck);
  for (const auto& f : files) command += " " + attn_test::quote(f);
  const attn_test::Run r = attn_test::shell(command);
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  std::vector<std::string> lines;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  // The bad notebook's problems, first and exactly (Python words the syntax error its own way after this).
  const std::string b = files[0] + " cell ";
  const std::vector<std::string> refusals = {
      b + "2: reads later (line 1) before any cell binds it", b + "4: reads inner (line 1) before any cell binds it",
      b + "5: reads k (line 2) before any cell binds it",     b + "6: reads member (line 3) before any cell binds it",
      b + "7: reads total (line 1) before any cell binds it", b + "8: reads torch (line 1) before any cell binds it",
      b + "9: does not parse: invalid syntax"};
  REQUIRE(lines.size() >= refusals.size() + 1);
  for (std::size_t i = 0; i < refusals.size(); ++i) CHECK_THAT(lines[i], Catch::StartsWith(refusals[i]));
  // Then nothing from attn's notebooks: every cell parsed and read only what earlier ones made.
  CHECK(lines.size() == refusals.size() + 1);
  CHECK(lines.back() == "checked " + std::to_string(code_cells) + " cells");
}

TEST_CASE("notebook: PyTorch runs every notebook and script of the record and prints what attn stored", "[torch]") {
  // tests/golden/notebooks.py --check: each configuration's cells in order, each printing what attn stored
  // in it, and its script printing them all; needs python3-torch, which the suite does not install.
  const attn_test::Run torch = attn_test::shell("/usr/bin/python3 -c 'import torch' 2>&1");
  if (torch.status != 0) attn_test::skip_case("python3 cannot import torch (Debian's python3-torch): " + torch.out, true);
  const attn_test::Run r = attn_test::shell("/usr/bin/python3 " + attn_test::quote(ATTN_TESTS_DIR "/golden/notebooks.py") +
                                            " --check " + attn_test::quote(ATTN_EXE));
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  std::smatch count;  // every configuration the generator has, all of them printing what attn stored
  REQUIRE(std::regex_search(r.err, count, std::regex("([0-9]+) of ([0-9]+) configurations printed what attn stored")));
  CHECK(count[1] == count[2]);
  CHECK(std::stoul(count[2]) >= recorded().size());
}

// The ASCII punctuation of markdown that no backslash escapes (CommonMark's escape), as (position, mark).
std::vector<std::pair<std::size_t, char>> unescaped_marks(const std::string& markdown) {
  std::vector<std::pair<std::size_t, char>> marks;
  for (std::size_t i = 0; i < markdown.size(); ++i) {
    const auto c = static_cast<unsigned char>(markdown[i]);
    if (c == '\\' && i + 1 < markdown.size() && std::ispunct(static_cast<unsigned char>(markdown[i + 1]))) {
      ++i;
      continue;
    }
    if (std::ispunct(c)) marks.emplace_back(i, markdown[i]);
  }
  return marks;
}

TEST_CASE("notebook: text from outside is markdown that shows it, and the script's comments show it as it is", "[notebook]") {
  CHECK(unescaped_marks("a \\[b\\] c").empty());
  CHECK(unescaped_marks("a [b\\]").size() == 1);
  // A sentence that would be a link, a tag, emphasis, code and maths if markdown acted on it.
  const std::string text = "$x^2$ [x](javascript:alert(1)) <b>bold</b> *a* `b`";
  const attn_test::Run nb = attn_test::run({"simple", "--text", text, "--format", "ipynb"});
  REQUIRE(nb.status == 0);
  const json doc = json::parse(nb.out);
  std::size_t steps = 0;
  std::string tokens_cell;
  for (const auto& c : doc.at("cells")) {
    const std::string source = joined(c.at("source"));
    if (c.at("cell_type") != "markdown" || source.rfind("**[", 0) != 0) continue;
    ++steps;
    // A step's cell: attn's heading markup, "**[k/n] `id`: " and the closing "**", then the lesson's words,
    // in which every punctuation mark is escaped.
    const std::size_t title = source.find("`: ") + 3, end = source.find("**\n\n");
    REQUIRE(end != std::string::npos);
    INFO(source);
    CHECK(unescaped_marks(source.substr(title, end - title)).empty());
    CHECK(unescaped_marks(source.substr(end + 4)).empty());
    if (source.find("`token_ids`") != std::string::npos) tokens_cell = source;
  }
  // Every step's cell was read: as many as the lesson's steps in the JSON of the same run.
  CHECK(steps == json::parse(attn_test::run({"simple", "--text", text, "--json"}).out).at("steps").size());
  // The tokens are there, escaped: '$' 3, '](' 16151, ...
  CHECK_THAT(tokens_cell, Catch::Contains("\\'\\$\\' 3"));
  CHECK_THAT(tokens_cell, Catch::Contains("\\'\\]\\(\\' 16151"));
  const attn_test::Run py = attn_test::run({"simple", "--text", text, "--format", "py"});
  REQUIRE(py.status == 0);
  CHECK_THAT(py.out, Catch::Contains("'](' 16151"));  // the comment shows the token as it is
  CHECK_THAT(py.out, !Catch::Contains("\\["));
}

// Bytes a terminal would act on: C0 controls but the line feed, DEL, and the UTF-8 of C1 controls.
static std::size_t raw_controls(const std::string& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    n += (c < 0x20 && c != '\n') || c == 0x7f || (c == 0xc2 && next >= 0x80 && next <= 0x9f);
  }
  return n;
}

TEST_CASE("notebook: text from outside is written in the notebook's JSON escaped as --json writes it", "[notebook][hostile]") {
  attn_test::Scratch s;
  // The example: a --text holding ESC, DEL and a C1 CSI, in metadata.attn's configuration.
  const std::string text = "a\x1b[2J b\x7f c\xc2\x9b" "31m d";
  const attn_test::Run nb = attn_test::run({"simple", "--text", text, "--format", "ipynb"});
  REQUIRE(nb.status == 0);
  CHECK(raw_controls(nb.out) == 0);
  CHECK_THAT(nb.out, Catch::Contains("\"text\": \"a\\u001b[2J b\\u007f c\\u009b31m d\""));
  const json doc = json::parse(nb.out);
  CHECK(doc.at("metadata").at("attn").at("lessons").at(0).at("config").at("text") == text);
  // The class: every string of the notebook, the configuration (a path from outside too) and the cells (the
  // tokens' own names, in the inputs' comments and the steps' words), through the JSON writer --json uses.
  const std::vector<std::string> tokens{"del\x7f", "c1\xc2\x9b", "esc\x1b[31m", "rlo\xe2\x80\xae"};
  json input{{"tokens", tokens}, {"embeddings", json::array()}};
  for (std::size_t i = 0; i < tokens.size(); ++i) input["embeddings"].push_back({0.5 * static_cast<double>(i), 1.0});
  const std::string path = s.file("in\x7f\xc2\x9b.json", input.dump());
  for (const std::string& lesson : {"simple", "causal"}) {
    INFO(lesson);
    const attn_test::Run with_file = attn_test::run({lesson, "--input", path, "--format", "ipynb"});
    REQUIRE(with_file.status == 0);
    CHECK(raw_controls(with_file.out) == 0);
    const json config = json::parse(with_file.out).at("metadata").at("attn").at("lessons").at(0).at("config");
    const attn_test::Run as_json = attn_test::run({lesson, "--input", path, "--json"});
    CHECK(config == json::parse(as_json.out).at("config"));
    CHECK(config.at("input").get<std::string>().find(path) != std::string::npos);
    // The configuration's input line as --json writes it is the notebook's, byte for byte.
    const std::size_t at = as_json.out.find("\"input\": ");
    REQUIRE(at != std::string::npos);
    CHECK_THAT(with_file.out, Catch::Contains(as_json.out.substr(at, as_json.out.find('\n', at) - at)));
  }
}
