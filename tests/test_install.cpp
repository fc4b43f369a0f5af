// What a Debian user expects of an installed tool, generated from the option table: the man page, the bash
// completion, the README's option tables, and `cmake --install` into a DESTDIR staging tree that runs.
#include <catch2/catch.hpp>

#include <regex>

#include <fstream>
#include <sstream>

#include "tools/docgen.hpp"
#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "lessons/registry.hpp"
#include "support.hpp"

using attn_test::quote;
using attn_test::shell;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp_dir() {
  char tmpl[] = "/tmp/attn-install-XXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  REQUIRE(dir != nullptr);
  return dir;
}

// What the completion offers for the words typed so far (the last one is being completed).
std::string complete(const std::string& script, const std::string& words) {
  const std::string cmd = "source " + quote(script) + "; COMP_WORDS=(" + words +
                          "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _attn; "
                          "((${#COMPREPLY[@]})) && printf '%s\\n' \"${COMPREPLY[@]}\"";
  return shell("bash -c " + quote(cmd) + " 2>&1").out;
}

std::vector<std::string> every_option_name() {
  std::vector<std::string> names;
  for (const auto& spec : attn::option_table())
    for (const auto& n : spec.spellings()) names.push_back(n);
  return names;
}

void check_man_page(const std::string& path) {
  // Rendered as man(1) renders it, with groff's warnings on; there must be none.
  const auto rendered = shell("MANWIDTH=100 man --warnings -l " + quote(path) + " 2>&1");
  REQUIRE(rendered.status == 0);
  CHECK(rendered.out.find("warning") == std::string::npos);
  CHECK(rendered.out.find("ATTN(1)") != std::string::npos);
  for (const char* section : {"SYNOPSIS", "LESSONS", "OPTIONS OF EVERY LESSON", "EXIT STATUS", "ENVIRONMENT", "FILES"})
    CHECK(rendered.out.find(section) != std::string::npos);
  for (const auto& lesson : attn_test::lesson_names()) CHECK(rendered.out.find("attn " + lesson + "\n") != std::string::npos);
  for (const char* command : {"attn tour", "attn list", "attn bench"}) CHECK(rendered.out.find(command) != std::string::npos);
  for (const auto& name : every_option_name()) {
    INFO(name);
    CHECK(rendered.out.find(name) != std::string::npos);
  }
  // A lesson's own help text and default, and the mode that sets another default.
  CHECK(rendered.out.find("(--d-out 1 is exercise 3.2)") != std::string::npos);
  // (man wraps and hyphenates lines where it likes, "--esti\u2010" then "mate": the text is compared with
  // those breaks joined and its whitespace runs made single spaces.)
  const std::string joined = std::regex_replace(rendered.out, std::regex("\xe2\x80\x90\\s+"), "");
  const std::string flowed = std::regex_replace(joined, std::regex("\\s+"), " ");
  CHECK(flowed.find("Default: 32 (with --kv-cache)") != std::string::npos);
  CHECK(flowed.find("Default: 32 (with --estimate)") != std::string::npos);
  CHECK(flowed.find("SYNOPSIS attn LESSON [OPTIONS] attn list [OPTIONS] attn tour [OPTIONS] attn present [LESSON ...] "
                     "[OPTIONS] attn serve [OPTIONS] attn bench [OPTIONS] attn [--help|--version] DESCRIPTION") !=
        std::string::npos);
}

void check_completion(const std::string& script) {
  const std::string commands = complete(script, "attn ''");
  for (const auto& lesson : attn_test::lesson_names()) CHECK(commands.find(lesson + "\n") != std::string::npos);
  CHECK(commands.find("bench\n") != std::string::npos);
  CHECK(complete(script, "attn gq") == "gqa\n");
  CHECK(complete(script, "attn gqa --dt") == "--dtype\n");
  CHECK(complete(script, "attn gqa --dtype ''") == "fp32\nbf16\nfp16\n");
  CHECK(complete(script, "attn causal --color a") == "auto\nalways\n");
  CHECK(complete(script, "attn simple --format j") == "json\n");
  CHECK(complete(script, "attn simple --step attn_weights_2_") ==
        "attn_weights_2_tmp\nattn_weights_2_tmp_sum\nattn_weights_2_naive\nattn_weights_2_naive_sum\n"
        "attn_weights_2_sum\n");
  CHECK(complete(script, "attn mha-wrapper --step batch,head_1_") == "batch,head_1_attn_weights\nbatch,head_1_context_vec\n");
  CHECK(complete(script, "attn bench --impl wrapper,f") == "wrapper,fused\n");
  // Only the options a lesson takes.
  CHECK(complete(script, "attn simple --he") == "--heatmap\n--help\n");
  CHECK(complete(script, "attn gqa --he") == "--heatmap\n--heads\n--help\n");
  CHECK(complete(script, "attn simple --seed ''").empty());
  CHECK(complete(script, "attn simple --max-memory ''").empty());
  // --save-npy completes directories only.
  const std::string docs = std::string(ATTN_SOURCE_DIR) + "/docs/";
  CHECK(complete(script, "attn simple --save-npy " + quote(docs + "l")) == docs + "lessons\n");
  CHECK(complete(script, "attn simple --save-npy " + quote(docs + "in")).empty());  // inputs.md is a file
}

}  // namespace

TEST_CASE("the README's option tables are the ones the option table generates", "[install]") {
  const std::string readme = slurp(ATTN_SOURCE_DIR "/README.md");
  const std::string begin = "by `build/attn-docgen readme-options`; a test compares -->\n";
  const std::string end = "<!-- end of generated option tables -->";
  const auto from = readme.find(begin), to = readme.find(end);
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const std::string in_readme = readme.substr(from + begin.size(), to - from - begin.size());
  // On a difference: build/attn-docgen readme-options prints what the README must hold.
  CHECK(in_readme == attn::readme_option_tables());
}

TEST_CASE("man page: the SYNOPSIS has a line for every subcommand, present and serve among them", "[man]") {
  const std::string page = attn::man_page();
  const auto from = page.find(".SH SYNOPSIS\n"), to = page.find(".SH DESCRIPTION\n");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  const std::string synopsis = page.substr(from, to - from);
  CHECK(synopsis ==
        ".SH SYNOPSIS\n"
        ".B attn\n.I LESSON\n.RI [ OPTIONS ]\n.br\n"
        ".B attn list\n.RI [ OPTIONS ]\n.br\n"
        ".B attn tour\n.RI [ OPTIONS ]\n.br\n"
        ".B attn present\n.RI [ \"LESSON ...\\&\" ]\n.RI [ OPTIONS ]\n.br\n"
        ".B attn serve\n.RI [ OPTIONS ]\n.br\n"
        ".B attn bench\n.RI [ OPTIONS ]\n.br\n"
        ".B attn\n.RB [ \\-\\-help | \\-\\-version ]\n");
  // And every subcommand the command line has that is no lesson, should one be added.
  attn::CommandLine parsed;
  attn::Cli cli;
  attn::setup(cli, parsed);
  std::size_t others = 0;
  for (const CLI::App* sub : cli.app.get_subcommands([](const CLI::App*) { return true; })) {
    if (attn::find_lesson(sub->get_name()) != nullptr) continue;
    INFO("attn " << sub->get_name());
    CHECK(synopsis.find(".B attn " + sub->get_name() + "\n") != std::string::npos);
    ++others;
  }
  CHECK(others == 5);
}

TEST_CASE("the built man page is the generated one and renders with man -l", "[install]") {
  CHECK(slurp(ATTN_BUILD_DIR "/attn.1") == attn::man_page());
  check_man_page(ATTN_BUILD_DIR "/attn.1");
}

TEST_CASE("the bash completion completes subcommands, options, enum values and step ids", "[install]") {
  CHECK(slurp(ATTN_BUILD_DIR "/attn.bash-completion") == attn::bash_completion());
  check_completion(ATTN_BUILD_DIR "/attn.bash-completion");
}

TEST_CASE("cmake --install into a DESTDIR staging tree: binary, bench, data, man page and completion, and uninstall.sh", "[install]") {
  const std::string stage = temp_dir();
  const auto installed = shell("DESTDIR=" + quote(stage) + " cmake --install " + quote(ATTN_BUILD_DIR) +
                               " --prefix /usr 2>&1");
  INFO(installed.out);
  REQUIRE(installed.status == 0);
  const std::string usr = stage + "/usr";
  for (const char* file : {"/bin/attn", "/libexec/attn/attn-bench", "/share/attn/journey.json",
                           "/share/attn/gpt2/encoder.json", "/share/attn/gpt2/vocab.bpe", "/share/attn/gpt2/README.md",
                           "/share/attn/gpt2-tf-to-hf.py",
                           "/share/man/man1/attn.1", "/share/bash-completion/completions/attn"}) {
    INFO(file);
    CHECK(shell("test -f " + quote(usr + file)).status == 0);
  }
  CHECK(shell("test -x " + quote(usr + "/bin/attn") + " && test -x " + quote(usr + "/libexec/attn/attn-bench")).status == 0);
  // The staged binary finds its data and its benchmark program relative to itself.
  const auto lesson = shell("cd / && " + quote(usr + "/bin/attn") + " simple --quiet --step context_vec_2");
  CHECK(lesson.out == "context_vec_2\ntensor([0.4419, 0.6515, 0.5683])\n");
  const auto bench = shell(quote(usr + "/bin/attn") +
                           " bench --batch 1 --tokens 8 --dim 8 --heads 2 --kv-groups 1 --repeats 1 --impl fused --json"
                           " | jq -r '.results[0].impl'");
  CHECK(bench.out == "fused\n");
  check_man_page(usr + "/share/man/man1/attn.1");
  check_completion(usr + "/share/bash-completion/completions/attn");
  // The converter of the book's GPT-2 download is installed beside the data, and the staged attn names it
  // (not the checkout's) when it meets such a download.
  const std::string script = usr + "/share/attn/gpt2-tf-to-hf.py";
  CHECK(shell("test -x " + quote(script)).status == 0);
  CHECK(slurp(script) == slurp(ATTN_SOURCE_DIR "/scripts/gpt2-tf-to-hf.py"));
  const std::string book = stage + "/gpt2/124M";
  shell("mkdir -p " + quote(book) + " && cd " + quote(book) + " && touch hparams.json model.ckpt.index");
  const auto advice = shell("cd " + quote(stage) + " && " + quote(usr + "/bin/attn") + " mha --model gpt2/124M 2>&1");
  CHECK(advice.status == 1);
  CHECK_THAT(advice.out, Catch::Contains(": python3 " + script + " gpt2/124M gpt2/124M-hf, then pass --model gpt2/124M-hf"));
  // scripts/uninstall.sh removes every file the install put there (the list the install wrote), and the
  // directories of attn's own, and nothing else.
  const std::string listed = slurp(usr + "/share/attn/installed-files.txt");
  CHECK(listed.find("/usr/bin/attn\n") != std::string::npos);
  CHECK(listed.find("/usr/share/attn/installed-files.txt\n") != std::string::npos);
  CHECK(shell("mkdir -p " + quote(usr + "/share/doc/other") + " && touch " + quote(usr + "/bin/other")).status == 0);
  const auto removed = shell("DESTDIR=" + quote(stage) + " bash " + quote(std::string(ATTN_SOURCE_DIR) + "/scripts/uninstall.sh") +
                             " /usr 2>&1");
  INFO(removed.out);
  CHECK(removed.status == 0);
  CHECK(removed.out.find("removed attn from /usr") != std::string::npos);
  CHECK(shell("cd " + quote(usr) + " && find . -type f | sort").out == "./bin/other\n");
  CHECK(shell("test -e " + quote(usr + "/share/attn") + " || test -e " + quote(usr + "/libexec/attn") + " || echo gone").out == "gone\n");
  CHECK(shell("test -d " + quote(usr + "/share/doc/other")).status == 0);
  // Run again, there is nothing to remove: it says so and fails.
  const auto again = shell("DESTDIR=" + quote(stage) + " bash " + quote(std::string(ATTN_SOURCE_DIR) + "/scripts/uninstall.sh") +
                           " /usr 2>&1");
  CHECK(again.status == 1);
  CHECK(again.out.find("no attn is installed under /usr") != std::string::npos);
  shell("rm -rf " + quote(stage));
}
