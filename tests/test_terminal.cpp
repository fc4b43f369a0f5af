// The classroom and terminal experience: attn list, attn tour, colour rules, heatmaps, --quiet,
// --pause (in-process and in a real terminal under tmux) and the KV-cache explorer.
#include <catch2/catch.hpp>

#include <set>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support.hpp"
#include "tmux.hpp"

using attn_test::quote;
using attn_test::shell;

namespace {

const std::vector<std::string> kLessons = attn_test::lesson_names();
const std::string kCount = std::to_string(kLessons.size());

attn_test::Run run_as(const std::vector<std::string>& args, const attn::Terminal& term, const std::string& input = "") {
  std::ostringstream out, err;
  std::istringstream in(input);
  attn_test::Run r;
  r.status = attn::run_cli(args, out, err, in, term);
  r.out = out.str();
  r.err = err.str();
  return r;
}

attn::Terminal tty() {
  attn::Terminal t;
  t.stdin_tty = t.stdout_tty = true;
  t.term = "xterm-256color";
  return t;
}

bool has_escape(const std::string& s) { return s.find('\x1b') != std::string::npos; }

}  // namespace

TEST_CASE("attn list names every lesson of the registry in its order", "[terminal]") {
  const auto r = attn_test::run({"list"});
  REQUIRE(r.status == 0);
  std::size_t last = 0;
  for (const auto& lesson : kLessons) {
    const std::size_t at = r.out.find("attn " + lesson + "\n");
    CHECK(at != std::string::npos);
    CHECK(at >= last);
    last = at;
  }
  // Each title starts in the same column, however long a section is ("ch04/03_kv-cache").
  std::set<std::size_t> title_columns;
  std::size_t from = 0;  // past the previous lesson: mha and heads share section 3.6.2
  for (const auto& lesson : attn::lessons()) {
    const std::size_t at = r.out.find(lesson.info.section + " ", from);
    REQUIRE(at != std::string::npos);
    const std::size_t line_start = r.out.rfind('\n', at) + 1;
    from = r.out.find(lesson.info.title, at);
    title_columns.insert(from - line_start);
  }
  CHECK(title_columns.size() == 1);
  const auto doc = nlohmann::json::parse(attn_test::run({"list", "--json"}).out);
  REQUIRE(doc.size() == attn::lessons().size());
  for (std::size_t i = 0; i < doc.size(); ++i) {
    CHECK(doc[i]["name"] == attn::lessons()[i].info.name);
    CHECK(doc[i]["section"] == attn::lessons()[i].info.section);
    CHECK(doc[i]["title"] == attn::lessons()[i].info.title);
  }
}

TEST_CASE("attn list ends with every way to see every lesson: present and tour and its html page as the README says",
          "[terminal]") {
  const auto r = attn_test::run({"list"});
  REQUIRE(r.status == 0);
  const std::size_t footer = r.out.find("\nEvery lesson, in book order:\n");
  REQUIRE(footer != std::string::npos);
  std::istringstream lines(r.out.substr(footer));
  std::vector<std::string> commands;
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK(line.size() <= 80);
    if (line.rfind("  attn ", 0) == 0) commands.push_back(line.substr(2, line.find("  ", 2) - 2));
  }
  CHECK(commands == std::vector<std::string>{"attn present", "attn tour --pause", "attn tour --format html > tour.html"});
  // Each is what the README's "In class" shows a teacher, and each is a command attn takes as written.
  std::ifstream readme(ATTN_SOURCE_DIR "/README.md");
  std::stringstream text;
  text << readme.rdbuf();
  const std::string all = text.str();
  const std::size_t in_class = all.find("\n## In class\n");
  REQUIRE(in_class != std::string::npos);
  const std::string section = all.substr(in_class, all.find("\n## ", in_class + 1) - in_class);
  for (const auto& command : commands) {
    INFO(command);
    const std::string run_part = command.substr(0, command.find(" >"));
    CHECK(section.find(run_part) != std::string::npos);
    std::istringstream words(run_part.substr(5));
    std::vector<std::string> args;
    for (std::string w; words >> w;) args.push_back(w);
    args.push_back("--help");
    CHECK(attn_test::run(args).status == 0);
  }
}

TEST_CASE("colour only on a terminal, never with NO_COLOR, TERM=dumb or --json", "[terminal][e2e]") {
  CHECK_FALSE(has_escape(attn_test::run({"simple"}).out));  // not a terminal
  CHECK(has_escape(run_as({"simple"}, tty()).out));
  attn::Terminal no_color = tty();
  no_color.no_color = "1";
  CHECK_FALSE(has_escape(run_as({"simple"}, no_color).out));
  attn::Terminal dumb = tty();
  dumb.term = "dumb";
  CHECK_FALSE(has_escape(run_as({"simple"}, dumb).out));
  CHECK(has_escape(attn_test::run({"simple", "--color", "always"}).out));
  CHECK_FALSE(has_escape(run_as({"simple", "--color", "never"}, tty()).out));
  CHECK_FALSE(has_escape(run_as({"causal", "--json", "--color", "always", "--heatmap", "always"}, tty()).out));
  // Through the real executable, in a pipe and with NO_COLOR=1.
  CHECK_FALSE(has_escape(shell(quote(ATTN_EXE) + " causal | cat").out));
  CHECK_FALSE(has_escape(shell("NO_COLOR=1 " + quote(ATTN_EXE) + " causal").out));
  CHECK(has_escape(shell(quote(ATTN_EXE) + " causal --color always | cat").out));
}

TEST_CASE("24-bit colour only when the terminal announces it", "[terminal]") {
  attn::Terminal truecolor = tty();
  const std::string cube = run_as({"all-tokens"}, truecolor).out;
  CHECK(cube.find("48;5;") != std::string::npos);
  CHECK(cube.find("48;2;") == std::string::npos);
  truecolor.colorterm = "truecolor";
  CHECK(run_as({"all-tokens"}, truecolor).out.find("48;2;") != std::string::npos);
}

TEST_CASE("heatmaps: labels, every number, masked cells marked without colour", "[terminal]") {
  const auto plain = attn_test::run({"causal", "--heatmap", "always"});
  REQUIRE(plain.status == 0);
  CHECK_FALSE(has_escape(plain.out));
  // The causal weights' first rows: 1.00 then masked cells; a legend with the range and the symbol.
  CHECK(plain.out.find("      'Your'   1.00      \xc2\xb7      \xc2\xb7      \xc2\xb7      \xc2\xb7      \xc2\xb7\n") !=
        std::string::npos);
  CHECK(plain.out.find("   'journey'   0.55   0.45      \xc2\xb7") != std::string::npos);
  CHECK(plain.out.find("  colours: 0 to 1   \xc2\xb7 masked (a later token)\n  a fixed scale, as probabilities are (here 0.15 to 1.00)\n") !=
        std::string::npos);
  // The keys' labels: wider than a cell, so every other one on each of two lines, whole, right-aligned over
  // their own columns.
  CHECK(plain.out.find("\n             'Your'      'starts'         'one'\n"
                       "                 'journey'        'with'        'step'\n      'Your'   1.00") != std::string::npos);
  // auto: only on a terminal; never: not even there.
  CHECK(attn_test::run({"causal"}).out.find("heatmap:") == std::string::npos);
  CHECK(run_as({"causal"}, tty()).out.find("heatmap:") != std::string::npos);
  CHECK(run_as({"causal", "--heatmap", "never"}, tty()).out.find("heatmap:") == std::string::npos);
  // Multi-head weights: one map per head of the first batch element.
  const auto mha = attn_test::run({"mha", "--heatmap", "always"});
  CHECK(mha.out.find("batch 0 of 2, head 1") != std::string::npos);
}

TEST_CASE("quiet mode shows only ids and tensors, no-explain drops explanations and code", "[terminal]") {
  const auto quiet = attn_test::run({"simple", "--quiet"});
  CHECK(quiet.out.rfind("inputs\ntensor([[0.4300", 0) == 0);
  CHECK(quiet.out.find("attn_scores_2\ntensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])\n") !=
        std::string::npos);
  CHECK(quiet.out.find(">>>") == std::string::npos);
  CHECK(quiet.out.find("shape:") == std::string::npos);
  const auto terse = attn_test::run({"simple", "--no-explain"});
  CHECK(terse.out.find(">>>") == std::string::npos);
  CHECK(terse.out.find("shape: torch.Size([6])") != std::string::npos);
}

TEST_CASE("attn tour runs every lesson, in text and as one JSON document", "[terminal]") {
  const auto text = attn_test::run({"tour"});
  REQUIRE(text.status == 0);
  for (std::size_t k = 0; k < kLessons.size(); ++k)
    CHECK(text.out.find("Lesson " + std::to_string(k + 1) + " of " + kCount + ": attn " + kLessons[k] + " --") != std::string::npos);
  const auto doc = nlohmann::json::parse(attn_test::run({"tour", "--json"}).out);
  REQUIRE(doc["lessons"].size() == kLessons.size());
  for (std::size_t k = 0; k < kLessons.size(); ++k) CHECK(doc["lessons"][k]["lesson"] == kLessons[k]);
}

TEST_CASE("pause mode waits for Enter after each step and stops on q", "[terminal][e2e]") {
  const auto r = run_as({"simple", "--pause", "--color", "never"}, tty(), "\n\nq\n");
  CHECK(r.status == 0);
  CHECK(r.out.find("[3/12] attn_scores_2") != std::string::npos);
  CHECK(r.out.find("[4/12]") == std::string::npos);
  CHECK(r.out.find("-- Enter: next step, q: quit (back and forth: attn present) --") != std::string::npos);
  // Not a terminal: --pause is ignored, everything is printed, nothing waits.
  const auto piped = attn_test::run({"simple", "--pause"});
  CHECK(piped.out.find("[12/12]") != std::string::npos);
  CHECK(piped.out.find("Enter") == std::string::npos);
  const auto devnull = shell(quote(ATTN_EXE) + " tour --pause </dev/null | grep -c 'Lesson [0-9]* of " + kCount + ":'");
  CHECK(devnull.out == kCount + "\n");
}

TEST_CASE("attn tour --pause in a real terminal (tmux): stops, advances on Enter, quits on q alone", "[terminal][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  const attn_test::Tmux pane(100, 50, quote(ATTN_EXE) + " tour --pause");
  INFO(pane.error());
  REQUIRE(pane.ok());
  CHECK(pane.wait_for("-- Enter: next step, q: quit (back and forth: attn present) --"));
  CHECK(pane.screen().find("[1/12] inputs") != std::string::npos);
  CHECK(pane.screen().find("[2/12]") == std::string::npos);
  pane.keys("Enter");
  CHECK(pane.wait_for("[2/12] query"));
  // A key that is neither Enter nor q is ignored, and the keys are read in order: had x advanced, Enter
  // would show [4/12] before q ends the run.
  pane.keys("x Enter");
  CHECK(pane.wait_for("[3/12] attn_scores_2"));
  pane.keys("q");  // no Enter after it: the terminal gives attn each key as it is pressed
  CHECK(pane.wait_for("attn-exited-0"));
  CHECK(pane.screen().find("[4/12]") == std::string::npos);
  CHECK(pane.wait_for("tty: echo icanon"));  // its mode set back (the shell prints it after attn-exited)
}

TEST_CASE("a --pause prompt gives the terminal its mode back when a signal ends or stops attn (tmux)", "[terminal][tmux]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  // The command line of attn alone (the tmux server's and the shell's hold it quoted, after other words).
  const std::string attn = quote("^" + std::string(ATTN_EXE) + " simple --pause$");
  const auto tty_of = [](const attn_test::Tmux& pane) {
    const std::string f = pane.format("#{pane_tty}");
    return f.substr(0, f.find('\n'));
  };
  for (const auto& [signal, status] : std::vector<std::pair<std::string, int>>{{"INT", 130}, {"TERM", 143}, {"HUP", 129}}) {
    INFO("SIG" << signal);
    const attn_test::Tmux pane(100, 50, quote(ATTN_EXE) + " simple --pause");
    INFO(pane.error());
    REQUIRE(pane.ok());
    CHECK(pane.wait_for("-- Enter: next step, q: quit"));
    CHECK(shell("stty -F " + quote(tty_of(pane)) + " -a").out.find("-icanon") != std::string::npos);  // keys, not lines
    CHECK(shell("pkill -" + signal + " -f -- " + attn).status == 0);
    CHECK(pane.wait_for("attn-exited-" + std::to_string(status)));  // ended by the signal, as before
    CHECK(pane.wait_for("tty: echo icanon"));  // not "-echo -icanon": a plain sh does not set it back itself
  }
  {  // Ctrl-Z under a shell with job control: attn stops, and the shell gets its terminal back as it was.
    const attn_test::Tmux pane(100, 50, "bash -c " + quote("set -m; " + quote(ATTN_EXE) + " simple --pause; exit $?"));
    REQUIRE(pane.ok());
    CHECK(pane.wait_for("-- Enter: next step, q: quit"));
    CHECK(shell("pkill -TSTP -f -- " + attn).status == 0);
    CHECK(pane.wait_for("attn-exited-148"));  // stopped (128 + SIGTSTP), the shell went on
    CHECK(pane.wait_for("tty: echo icanon"));
    shell("pkill -KILL -f -- " + attn);  // gone already: a stopped job left by its shell is hung up
  }
  // Where no shell can stop it (the process group has no parent with job control, as here), SIGTSTP is
  // discarded and attn goes on reading keys.
  const attn_test::Tmux pane(100, 50, quote(ATTN_EXE) + " simple --pause");
  REQUIRE(pane.ok());
  CHECK(pane.wait_for("-- Enter: next step, q: quit"));
  CHECK(shell("pkill -TSTP -f -- " + attn).status == 0);
  pane.keys("Enter");
  CHECK(pane.wait_for("[2/12] query"));
  CHECK(shell("stty -F " + quote(tty_of(pane)) + " -a").out.find("-icanon") != std::string::npos);
  pane.keys("q");
  CHECK(pane.wait_for("attn-exited-0"));
  CHECK(pane.wait_for("tty: echo icanon"));
}

TEST_CASE("Ctrl-C at a --pause prompt leaves --save-npy's DIR as it was (tmux)", "[terminal][tmux][npy]") {
  attn_test::need_program("/usr/bin/tmux", "tmux");
  const attn_test::Scratch s;
  const std::string dir = s.dir + "/out";
  REQUIRE(attn_test::run({"simple", "--save-npy", dir, "--quiet"}).status == 0);
  const auto before = shell("cd " + quote(dir) + " && ls -A && md5sum *").out;
  for (const std::string& target : {dir, s.dir + "/new"}) {
    INFO(target);
    const attn_test::Tmux pane(100, 50, quote(ATTN_EXE) + " simple --random 6x3 --pause --save-npy " + quote(target));
    INFO(pane.error());
    REQUIRE(pane.ok());
    CHECK(pane.wait_for("-- Enter: next step, q: quit"));
    // SIGINT to attn alone, as Ctrl-C sends it (to the shell around it too, which would then end as well).
    // "[-]-save-npy": a pattern that matches attn's command line but not the shell running pkill.
    CHECK(shell("pkill -INT -f -- " + quote("[-]-save-npy " + target)).status == 0);
    CHECK(pane.wait_for("attn-exited-130"));  // ended by SIGINT, as without --save-npy (128 + 2)
  }
  CHECK(shell("cd " + quote(dir) + " && ls -A && md5sum *").out == before);  // the earlier results, untouched
  CHECK(shell("ls -A " + quote(s.dir)).out == "out\n");                      // no new DIR, no staging left
}

TEST_CASE("the KV-cache explorer: MHA vs GQA memory with its formula", "[terminal][kv-cache]") {
  const std::vector<std::string> args{"gqa",        "--kv-cache",       "--emb-dim", "4096", "--heads", "32",
                                      "--layers",   "32",               "--context-length", "32768", "--kv-groups",
                                      "8",          "--batch",          "1",         "--dtype", "bf16"};
  const auto text = attn_test::run(args);
  REQUIRE(text.status == 0);
  CHECK(text.out.find("17.18") != std::string::npos);
  CHECK(text.out.find("4.29") != std::string::npos);
  CHECK(text.out.find("ratio 4.00x: GQA saves 75.00% of the KV cache.") != std::string::npos);
  CHECK(text.out.find("bytes = batch x context x (emb_dim / heads) x layers x 2") != std::string::npos);
  auto json_args = args;
  json_args.push_back("--json");
  const auto doc = nlohmann::json::parse(attn_test::run(json_args).out);
  CHECK(doc["report"]["mha"]["bytes"] == 17179869184ULL);
  CHECK(doc["report"]["gqa"]["bytes"] == 4294967296ULL);
  CHECK(doc["report"]["mha"]["gb"].get<double>() == Approx(17.18));
  CHECK(doc["report"]["ratio"].get<double>() == Approx(4.0));
  CHECK(doc["report"]["savings_percent"].get<double>() == Approx(75.0));
  // fp32 doubles every figure; a group size that does not divide the heads is refused.
  const auto fp32 = attn_test::run({"gqa", "--kv-cache", "--dtype", "fp32"});
  CHECK(fp32.out.find("34,359,738,368") != std::string::npos);
  CHECK(attn_test::run({"gqa", "--kv-cache", "--kv-groups", "5"}).status == 2);
}
