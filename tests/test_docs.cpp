// Every example in README.md and docs/ runs, and prints what the page says it prints.
//
// What counts as an example, in a fenced block:
// - ```sh: each line that runs attn (after an optional "$ "; a trailing "  # comment" is dropped) is run with
//   attn installed (below, run_here) and first on PATH, and must exit 0. A comment line right after a command ("# 2360064") is
//   the output that command must print. Lines that run other programs (bash scripts/..., apt-get) are
//   recipes for a person and are not run here. A block of timing examples (`attn bench` at GPT-2's size
//   takes seconds to minutes, and tests/test_kernels.cpp runs attn bench on tiny shapes) says
//   "<!-- not run: why -->" on the line above, and may hold nothing but attn bench lines; a block that
//   runs a notebook with PyTorch, which the suite does not install (the torch tier runs them all:
//   tests/test_notebook.cpp), says "<!-- not run: needs PyTorch -->" and may hold nothing but attn lines
//   that hand python3 their output; a block that starts attn serve, which serves until it is stopped, says
//   "<!-- not run: it serves until stopped -->" (the page's python examples start the server and stop it).
// - ```text whose first line is "$ attn ...": the command is run (and must exit 0, or the status that
//   "<!-- exit status N -->" on the line above says), and every line shown below it must
//   appear in its output in the same order ("..." lines stand for what the page leaves out; "~/attn/" is
//   the checkout, "/usr/local/" the prefix attn is installed into). A ```text block with no prompt needs a comment on the line above it: either
//   "<!-- output of: attn ... -->", checked the same way, or "<!-- not run: why -->".
// - ```python: run with Debian's python3 (which has NumPy) and the installed attn first on PATH; must exit 0,
//   and a "# value" comment after a print(...) on the same line must appear in what it printed.
// - ```json (the schema, abridged) and unlabelled blocks (diagrams) are illustrations, not examples.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "support.hpp"

using attn_test::quote;
using attn_test::shell;

namespace {

struct Block {
  std::string file;
  std::size_t line = 0;  // of the opening fence
  std::string kind;      // "sh", "text", "python", ...
  std::string comment;   // the HTML comment on the line above the fence, if any
  std::vector<std::string> body;
};

std::vector<Block> blocks_of(const std::string& file) {
  std::ifstream in(std::string(ATTN_SOURCE_DIR) + "/" + file);
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<Block> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0) continue;
    Block b{file, i + 1, lines[i].substr(3), "", {}};
    if (i > 0 && lines[i - 1].rfind("<!--", 0) == 0) b.comment = lines[i - 1];
    for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) b.body.push_back(lines[i]);
    out.push_back(b);
  }
  return out;
}

// README.md, then docs/*.md and docs/lessons/*.md in name order, relative to the checkout.
std::vector<std::string> doc_files() {
  namespace fs = std::filesystem;
  std::vector<std::string> files{"README.md"};
  for (const char* dir : {"docs", "docs/lessons"}) {
    std::vector<std::string> pages;
    for (const auto& e : fs::directory_iterator(fs::path(ATTN_SOURCE_DIR) / dir))
      if (e.path().extension() == ".md") pages.push_back(std::string(dir) + "/" + e.path().filename().string());
    std::sort(pages.begin(), pages.end());
    files.insert(files.end(), pages.begin(), pages.end());
  }
  return files;
}

// The pages call `attn` as the README's quick start leaves it: installed by `cmake --install` (into
// /usr/local) and found on PATH. The examples run the same way: this build installed into a prefix of this
// process's own (its data found beside the binary, as /usr/local/share/attn is), whose bin comes first on
// PATH. Removed when the program ends.
struct Installed {
  attn_test::Scratch prefix;  // removed with it
  Installed() {
    const auto r = shell("cmake --install " + quote(ATTN_BUILD_DIR) + " --prefix " + quote(prefix.dir) + " 2>&1");
    if (r.status != 0) throw std::runtime_error("cmake --install into " + prefix.dir + " failed:\n" + r.out);
  }
};

const std::string& install_prefix() {
  static const Installed installed;
  return installed.prefix.dir;
}

// Runs a shell command in the checkout with the installed attn first on PATH.
attn_test::Run run_here(const std::string& command) {
  const std::string env = "cd " + quote(ATTN_SOURCE_DIR) + " && PATH=" + quote(install_prefix() + "/bin:") +
                          "\"$PATH\" ";
  return shell(env + "bash -o pipefail -c " + quote(command) + " 2>&1");
}

std::string drop_comment(const std::string& line) {
  const auto at = line.find("  # ");
  std::string command = at == std::string::npos ? line : line.substr(0, at);
  while (!command.empty() && command.back() == ' ') command.pop_back();
  return command;
}

bool is_bench(const std::string& command) { return command.rfind("attn bench", 0) == 0; }

// What a block marked "<!-- not run: why -->" may hold: timings (attn bench), attn serve (which serves until
// it is stopped: docs/serve.md's python examples start it and stop it), or, when the reason is PyTorch, a
// notebook attn writes run with python3.
bool may_go_unrun(const std::string& comment, const std::string& command) {
  return is_bench(command) ||
         (comment == "<!-- not run: it serves until stopped -->" && command.rfind("attn serve", 0) == 0 &&
          command.find("--help") == std::string::npos) ||
         (comment == "<!-- not run: needs PyTorch -->" && command.find("--format py") != std::string::npos &&
          command.find("python3") != std::string::npos);
}

// Every line of `shown` (but "..." lines) appears in `output`, in order.
void check_shown(const std::vector<std::string>& shown, const std::string& output) {
  std::size_t at = 0;
  for (std::string line : shown) {
    if (line == "..." || line.empty()) continue;
    const auto home = line.find("~/attn/");
    if (home != std::string::npos) line.replace(home, 7, std::string(ATTN_SOURCE_DIR) + "/");
    const auto installed = line.find("/usr/local/");
    if (installed != std::string::npos) line.replace(installed, 11, install_prefix() + "/");
    INFO("the page shows: " << line);
    const auto found = output.find(line, at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found + line.size();
  }
}

std::string collapse(const std::string& s) {
  return std::regex_replace(s, std::regex("\\s+"), " ");
}

struct Counts {
  std::size_t commands = 0, outputs = 0, programs = 0;
};

// Runs (with `run`) or only counts (without) every example of one page.
void check_page(const std::string& file, bool run, Counts& n) {
  for (const auto& b : blocks_of(file)) {
    INFO(b.file << ":" << b.line);
    if (b.kind == "sh") {
      const bool not_run = b.comment.rfind("<!-- not run: ", 0) == 0;
      for (std::size_t i = 0; i < b.body.size(); ++i) {
        std::string line = b.body[i];
        if (line.rfind("$ ", 0) == 0) line = line.substr(2);
        const std::string command = drop_comment(line);
        if (command.rfind("attn ", 0) != 0) continue;
        INFO(command);
        if (not_run) {
          CHECK(may_go_unrun(b.comment, command));  // only timings and PyTorch's runs may go unrun
          continue;
        }
        ++n.commands;
        const bool has_output = i + 1 < b.body.size() && b.body[i + 1].rfind("# ", 0) == 0;
        n.outputs += has_output ? 1 : 0;
        if (!run) continue;
        const auto r = run_here(command);
        CHECK(r.status == 0);
        if (has_output) CHECK(r.out == b.body[i + 1].substr(2) + "\n");
      }
    } else if (b.kind == "text") {
      std::string command;
      std::vector<std::string> shown = b.body;
      if (b.comment.rfind("<!-- not run: ", 0) == 0) {  // a reason not to run wins over a "$ attn" line
        if (!b.body.empty() && b.body[0].rfind("$ attn ", 0) == 0) CHECK(may_go_unrun(b.comment, b.body[0].substr(2)));
        continue;
      } else if (!b.body.empty() && b.body[0].rfind("$ attn ", 0) == 0) {
        command = b.body[0].substr(2);
        shown.erase(shown.begin());
      } else if (b.comment.rfind("<!-- output of: ", 0) == 0) {
        command = b.comment.substr(16, b.comment.find(" -->") - 16);
      } else {
        FAIL_CHECK("a text block that is neither a command's output nor marked <!-- not run: why -->");
        continue;
      }
      INFO(command);
      // A refusal shown on purpose says so above the block: "<!-- exit status 2 -->" (its line is on stderr,
      // which run_here passes on with stdout).
      const std::smatch status = [&] {
        std::smatch m;
        std::regex_search(b.comment, m, std::regex("^<!-- exit status ([0-9]+) -->"));
        return m;
      }();
      // The docs test runs no benchmark: show it with "not run"; a refused one (exit status 2) computes nothing.
      CHECK_FALSE((is_bench(command) && (status.empty() || status[1] != "2")));
      ++n.commands;
      ++n.outputs;
      if (!run) continue;
      const auto r = run_here(command);
      CHECK(r.status == (status.empty() ? 0 : std::stoi(status[1])));
      check_shown(shown, r.out);
    } else if (b.kind == "python") {
      ++n.programs;
      for (const auto& line : b.body)
        n.outputs += line.rfind("print(", 0) == 0 && line.find("# ") != std::string::npos ? 1 : 0;
      if (!run) continue;
      std::string script;
      for (const auto& line : b.body) script += line + "\n";
      const auto r = run_here("/usr/bin/python3 -c " + quote(script));
      INFO(r.out);
      CHECK(r.status == 0);
      for (const auto& line : b.body) {
        const auto comment = line.find("# ");
        if (line.rfind("print(", 0) != 0 || comment == std::string::npos) continue;
        CHECK(collapse(r.out).find(collapse(line.substr(comment + 2))) != std::string::npos);
      }
    }
  }
}

// One test case per page, registered when the program starts ("docs: every example in README.md ..."), so
// that a failure names its page and ctest -j spreads the pages over the cores.
const bool registered_pages = [] {
  attn_test::register_cases_from("README.md and docs/", [] {
    for (const auto& file : doc_files())
      attn_test::register_case("docs: every example in " + file + " runs and prints what the page shows", "[docs]",
                               [file] {
                                 Counts n;
                                 check_page(file, true, n);
                               });
  });
  return true;
}();

}  // namespace

// A Markdown table as GitHub renders it (GFM): a header row, a delimiter row of the same number of cells
// (`| --- | :---: |`), then rows, each a line starting with "|". A line starting with "|" anywhere else is
// no table: GitHub prints it as text full of pipes (issue 29: a paragraph had split trainable.md's option
// table, and its last three rows rendered so). Cells are split at each "|" not escaped as "\|", as GFM
// does, inside code spans too. Fenced code blocks hold no tables.
namespace {

std::size_t cells_of(const std::string& row) {
  std::string s = row;
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t pipes = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\\') ++i;
    else if (s[i] == '|') ++pipes;
  // "| a | b |": the leading pipe opens the row, the trailing one (if any) closes it.
  return pipes - (s.size() > 1 && s.back() == '|' && s[s.size() - 2] != '\\' ? 1 : 0);
}

bool is_delimiter_row(const std::string& row) {
  return row.rfind("|", 0) == 0 && std::regex_match(row, std::regex(R"(\|(\s*:?-+:?\s*\|)*\s*:?-+:?\s*\|?\s*)"));
}

// One line per problem of the page's tables ("page:line: what: the line"), "" if none.
std::string table_problems(const std::string& name, const std::vector<std::string>& lines) {
  std::string problems;
  const auto problem = [&](std::size_t i, const std::string& what) {
    problems += name + ":" + std::to_string(i + 1) + ": " + what + ": " + lines[i] + "\n";
  };
  bool fenced = false;
  std::size_t columns = 0;  // of the table the previous line belongs to; 0 outside a table
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    const bool row = !fenced && line.rfind("|", 0) == 0;
    if (!row) {
      columns = 0;
      continue;
    }
    if (columns > 0) {  // a row of the table above
      if (cells_of(line) != columns) problem(i, "a row of " + std::to_string(cells_of(line)) + " cells in a table of " + std::to_string(columns));
      continue;
    }
    // A table starts here: this line is its header, the next its delimiter row.
    if (i + 1 >= lines.size() || !is_delimiter_row(lines[i + 1])) {
      problem(i, "a table row with no header and delimiter row above it (a paragraph between rows?)");
      continue;  // the next line is judged on its own
    }
    columns = cells_of(line);
    if (cells_of(lines[i + 1]) != columns) problem(i + 1, "a delimiter row of " + std::to_string(cells_of(lines[i + 1])) + " cells under a header of " + std::to_string(columns));
    ++i;
  }
  return problems;
}

}  // namespace

// The pages hold this many examples today (62 commands, 28 outputs, 5 programs on 2026-11-26), less a
// small margin for pages that shrink; fewer found means the parsing, not the pages, changed. Counted
// without running anything, so it is in the quick tier.
TEST_CASE("docs: the pages hold their examples, and each page is a test case of its own", "[docs-count]") {
  // What may go unrun: timings, and notebooks run with PyTorch when the page says that is why.
  CHECK(may_go_unrun("<!-- not run: timings -->", "attn bench --impl mha"));
  CHECK(may_go_unrun("<!-- not run: needs PyTorch -->", "attn causal --format py > x.py && python3 x.py"));
  CHECK_FALSE(may_go_unrun("<!-- not run: needs PyTorch -->", "attn causal --format json"));
  CHECK_FALSE(may_go_unrun("<!-- not run: needs PyTorch -->", "attn causal --json | python3 -c 'print(1)'"));
  CHECK_FALSE(may_go_unrun("<!-- not run: slow -->", "attn causal --format py | python3"));
  Counts n;
  for (const auto& file : doc_files()) check_page(file, false, n);
  CHECK(n.commands >= 58u);
  CHECK(n.outputs >= 26u);
  CHECK(n.programs >= 5u);
  std::size_t registered = 0;
  for (const auto& t : Catch::getAllTestCasesSorted(*Catch::getCurrentContext().getConfig()))
    registered += t.name.rfind("docs: every example in ", 0) == 0 ? 1 : 0;
  CHECK(registered == doc_files().size());
}

TEST_CASE("a module lesson's JSON alone rebuilds its context_vecs in NumPy: inputs, config, parameters", "[docs]") {
  const std::vector<std::string> configurations{
      "mha",         "mha --heads 1",          "mha --qkv-bias --heads 3 --d-out 6 --random 7x5 --batch 1",
      "mha-wrapper", "mha-wrapper --heads 3 --qkv-bias --d-out 1",
      "gqa",         "gqa --kv-groups 1 --qkv-bias --seed 9",
      "causal",      "causal --qkv-bias --d-out 3 --random 4x6"};
  for (const auto& args : configurations) {
    INFO("attn " << args);
    const auto r = run_here("attn " + args + " --json | /usr/bin/python3 tests/rebuild_context_vecs.py");
    REQUIRE(r.status == 0);
    const double diff = std::stod(r.out);
    CHECK(diff <= 1e-6);
  }
}

TEST_CASE("docs: every Markdown table of README.md and docs/ is whole as GitHub renders it", "[docs]") {
  // The check finds what it is for: a paragraph between rows, a row of another width, a missing delimiter row.
  const std::vector<std::string> good{"| a | b \\| c |", "| --- | :---: |", "| `x\\|y` | 2 |", "", "text | not a row"};
  CHECK(table_problems("good", good).empty());
  CHECK_THAT(table_problems("split", {"| a | b |", "| --- | --- |", "| 1 | 2 |", "A paragraph.", "| 3 | 4 |"}),
             Catch::Contains("split:5: a table row with no header"));
  CHECK_THAT(table_problems("wide", {"| a | b |", "| --- | --- |", "| 1 | 2 | 3 |"}),
             Catch::Contains("wide:3: a row of 3 cells in a table of 2"));
  CHECK_THAT(table_problems("unpiped", {"| a | b |", "| 1 | 2 |"}), Catch::Contains("unpiped:1: a table row with no header"));
  CHECK_THAT(table_problems("delimiter", {"| a | b |", "| --- |", "| 1 | 2 |"}),
             Catch::Contains("delimiter:2: a delimiter row of 1 cells under a header of 2"));
  CHECK(table_problems("fenced", {"```text", "| not a table", "```"}).empty());

  namespace fs = std::filesystem;
  std::vector<std::string> pages{"README.md"};
  for (const auto& e : fs::recursive_directory_iterator(fs::path(ATTN_SOURCE_DIR) / "docs"))
    if (e.path().extension() == ".md") pages.push_back(fs::relative(e.path(), ATTN_SOURCE_DIR).string());
  std::sort(pages.begin(), pages.end());
  std::size_t tables = 0;
  for (const auto& page : pages) {
    std::ifstream in(std::string(ATTN_SOURCE_DIR) + "/" + page);
    REQUIRE(in.good());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      tables += is_delimiter_row(line) ? 1 : 0;
      lines.push_back(line);
    }
    CHECK(table_problems(page, lines) == "");
  }
  CHECK(tables >= 48u);  // 53 tables on 2026-11-26, less a margin (a check that found none would judge nothing)
}
