// The command line as a user meets it: the real executable, pipes into python3 and jq, help,
// version, errors, and finding the bundled data from anywhere.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "support.hpp"

using attn_test::quote;
using attn_test::run;
using attn_test::shell;

namespace {

const std::string kExe = quote(ATTN_EXE);
const std::vector<std::string> kLessons = attn_test::lesson_names();

// Python's json module, refusing the NaN/Infinity extensions: exit 1 on any non-standard token.
const std::string kStrictPython =
    "python3 -c 'import json,sys; json.load(sys.stdin, parse_constant=lambda c: sys.exit(1))'";

std::string temp_dir() {
  char tmpl[] = "/tmp/attn-test-XXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  REQUIRE(dir != nullptr);
  return dir;
}

}  // namespace

TEST_CASE("every lesson's --json parses with strict Python json and with jq", "[cli][e2e]") {
  for (const auto& lesson : kLessons) {
    INFO(lesson);
    CHECK(shell(kExe + " " + lesson + " --json | " + kStrictPython).status == 0);
    const auto jq = shell(kExe + " " + lesson + " --json | jq -r '.lesson'");
    CHECK(jq.status == 0);
    CHECK(jq.out == lesson + "\n");
  }
  // A step with -inf is still strict JSON (the strings "-inf"); check one parses into NumPy-ready floats.
  const auto py = shell(kExe + " simple --json | python3 -c 'import json,sys; d=json.load(sys.stdin); "
                        "s=[x for x in d[\"steps\"] if x[\"id\"]==\"attn_weights_2\"][0]; print(round(sum(s[\"data\"]),4))'");
  CHECK(py.status == 0);
  CHECK(py.out == "1.0\n");
}

TEST_CASE("the text output holds the book's numbers and no escape codes when piped", "[cli][e2e]") {
  const auto r = shell(kExe + " simple | cat");
  CHECK(r.status == 0);
  CHECK(r.out.find("tensor([0.4419, 0.6515, 0.5683])") != std::string::npos);
  CHECK(r.out.find('\x1b') == std::string::npos);
}

TEST_CASE("version and help", "[cli]") {
  const auto v = run({"--version"});
  CHECK(v.status == 0);
  CHECK(v.out == "attn " ATTN_VERSION_FOR_TESTS "\n");
  const auto h = run({"--help"});
  CHECK(h.status == 0);
  for (const auto& lesson : kLessons) CHECK(h.out.find(lesson) != std::string::npos);
  const auto th = run({"trainable", "--help"});
  CHECK(th.status == 0);
  for (const char* opt : {"--d-out", "--seed", "--qkv-bias", "--query", "--input", "--random", "--json"})
    CHECK(th.out.find(opt) != std::string::npos);
  CHECK(th.out.find("=2") != std::string::npos);  // the default of --d-out is shown
  const auto gh = run({"gqa", "--help"});
  for (const char* opt : {"--heads H=4", "--kv-groups G=2", "--d-out N=4", "--dropout P=0", "--dropout-rng RNG=default",
                          "mkl", "--batch B=2"})
    CHECK(gh.out.find(opt) != std::string::npos);
  const auto none = run({});
  CHECK(none.status == 0);
  CHECK(none.out.find("Examples:") != std::string::npos);
}

TEST_CASE("bad options and inputs: one line on stderr, nothing on stdout, exit 2 or 1", "[cli]") {
  struct Bad {
    std::vector<std::string> args;
    int status;
    std::string needle;
  };
  const std::vector<Bad> cases{
      {{"nonsense"}, 2, "nonsense"},
      {{"simple", "--bogus"}, 2, "--bogus"},
      {{"simple", "--query", "6"}, 2, "--query 6"},
      {{"simple", "--query", "-1"}, 2, "--query"},
      {{"trainable", "--d-out", "0"}, 2, "--d-out"},
      {{"trainable", "--seed", "x"}, 2, "--seed"},
      {{"simple", "--input", "/nonexistent.json"}, 1, "/nonexistent.json"},
      {{"mha", "--d-out", "5"}, 2, "--d-out 5"},
      {{"gqa", "--kv-groups", "3"}, 2, "--kv-groups 3"},
      {{"mha", "--heads", "0"}, 2, "--heads"},
      {{"causal", "--dropout", "1.5"}, 2, "--dropout"},
      {{"dropout", "--dropout", "-0.1"}, 2, "--dropout"},
      {{"dropout", "--dropout-rng", "cuda"}, 2, "--dropout-rng"},
      {{"mha", "--batch", "0"}, 2, "--batch"},
      {{"mha", "--random", "0x3"}, 2, "--random"},
      {{"mha", "--random", "12"}, 2, "--random"},
      {{"simple", "--random", "2x2", "--input", "x.json"}, 2, "--random"},
  };
  for (const auto& b : cases) {
    INFO((b.args.size() > 1 ? b.args[0] + " " + b.args[1] : b.args[0]));
    const auto r = run(b.args);
    CHECK(r.status == b.status);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("attn: ", 0) == 0);
    CHECK(r.err.find(b.needle) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("input files in JSON and CSV", "[cli]") {
  const auto r = run({"all-tokens", "--input", ATTN_TESTS_DIR "/golden/inputs/eight_d2.csv"});
  CHECK(r.status == 0);
  CHECK(r.out.find("8 tokens x 2 dims") != std::string::npos);
  CHECK(r.out.find("tok7") != std::string::npos);
}

TEST_CASE("the bundled data is found from any directory and from an installed layout", "[cli][e2e]") {
  CHECK(shell("cd / && " + kExe + " simple | grep -c 'context_vec_2'").out != "0\n");
  // An installed tree: bin/attn beside share/attn/journey.json. Mark its data so we see it is the one used.
  const std::string prefix = temp_dir();
  REQUIRE(shell("mkdir -p " + prefix + "/bin " + prefix + "/share/attn && cp " + kExe + " " + prefix + "/bin/").status == 0);
  std::ofstream(prefix + "/share/attn/journey.json") << R"({"tokens": ["installed", "copy"], "embeddings": [[1, 0], [0, 1]]})";
  const auto r = shell("cd / && " + prefix + "/bin/attn simple");
  CHECK(r.status == 0);
  CHECK(r.out.find("tokens: 'installed' 'copy'") != std::string::npos);
  shell("rm -rf " + quote(prefix));
}

TEST_CASE("every --help fits 80 columns and names negatable flags plainly", "[cli]") {
  std::vector<std::string> commands{""};
  for (const auto& lesson : kLessons) commands.push_back(lesson);
  for (const char* other : {"list", "tour", "bench"}) commands.emplace_back(other);
  for (const auto& command : commands) {
    INFO("attn " << command << " --help");
    const auto h = command.empty() ? run({"--help"}) : run({command, "--help"});
    REQUIRE(h.status == 0);
    std::istringstream lines(h.out);
    std::string line, longest;
    while (std::getline(lines, line))
      if (line.size() > longest.size()) longest = line;
    CHECK(longest.size() <= 80);
    CHECK(h.out.find("{false}") == std::string::npos);
  }
  CHECK(run({"simple", "--help"}).out.find("--explain, --no-explain") != std::string::npos);
  CHECK(run({"gqa", "--help"}).out.find("(bonus\nmaterial ch04/04_gqa in the book's repository)") != std::string::npos);
  CHECK(run({"list", "--help"}).out.find("--json") != std::string::npos);
}

TEST_CASE("an unknown command suggests the nearest one", "[cli]") {
  const auto r = run({"mha_wrapper"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "attn: unknown command 'mha_wrapper'; did you mean 'mha-wrapper'? (see 'attn list' for the lessons, "
                 "'attn --help' for everything)\n");
  CHECK(run({"tuor"}).err.find("did you mean 'tour'?") != std::string::npos);
  CHECK(run({"Simple"}).err.find("did you mean 'simple'?") != std::string::npos);
  CHECK(run({"nonsense"}).err.find("did you mean") == std::string::npos);
}

TEST_CASE("a --query out of range names the input's real range, negative or past the end", "[cli]") {
  const auto negative = run({"simple", "--query", "-1"});
  CHECK(negative.status == 2);
  CHECK(negative.err == "attn: --query -1 is not a token index (the input has 6 tokens, numbered 0 to 5) "
                        "(see 'attn simple --help')\n");
  CHECK(run({"trainable", "--query", "6"}).err.find("(the input has 6 tokens, numbered 0 to 5)") != std::string::npos);
  CHECK(run({"simple", "--query", "two"}).err.find("expected a token index") != std::string::npos);
}

TEST_CASE("counts are said in the singular for one: 1 token, 1 dim", "[cli]") {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/one.json") << "[[0.5]]";
  const auto r = run({"trainable", "--input", dir + "/one.json"});
  CHECK(r.out.find("inputs: 1 token x 1 dim from") != std::string::npos);
  CHECK(r.out.find("at once: 1 token, each now") != std::string::npos);
  CHECK(run({"simple", "--input", dir + "/one.json", "--query", "1"}).err.find("(the input has 1 token, numbered 0 to 0)") !=
        std::string::npos);
  shell("rm -rf " + quote(dir));
}

TEST_CASE("dropout on a matrix of ones is drawn with positions, not as queries and keys", "[cli][terminal]") {
  const auto r = run({"dropout", "--heatmap", "always", "--step", "dropout_ones,dropout_attn_weights"});
  const auto ones = r.out.find("heatmap: rows and columns are positions (not queries and keys)");
  const auto weights = r.out.find("heatmap: rows are queries, columns are keys");
  CHECK(ones != std::string::npos);
  CHECK(weights != std::string::npos);
  CHECK(ones < weights);
  CHECK(r.out.find("                  0      1      2      3      4      5\n") != std::string::npos);
}

namespace {

// Every subcommand of attn, with the options its parser accepts: those it lists in --help and those it
// accepts only to refuse them (attn simple --heads), each with its table entry.
struct Subcommands {
  attn::CommandLine parsed;
  attn::Cli cli;
  std::vector<const attn::Sub*> all;
  Subcommands() {
    attn::setup(cli, parsed);
    for (const attn::Sub& lesson : cli.lessons) all.push_back(&lesson);
    for (const attn::Sub* other : {&cli.list, &cli.tour, &cli.present, &cli.bench, &cli.serve}) all.push_back(other);
  }
};

bool refused_option(const CLI::Option& o) { return o.get_group() == attn::kRefusedGroup; }

}  // namespace

TEST_CASE("a value error names its option in every subcommand and where the option is only accepted to be refused",
          "[cli][errors]") {
  // The examples: options attn simple and attn tour accept only to refuse them, whose names CLI11 left out.
  CHECK(run({"simple", "--seed", "-1"}).err ==
        "attn: --seed: expected a whole number from 0 to 18446744073709551615, got '-1' (see 'attn simple --help')\n");
  CHECK(run({"tour", "--heads", "0"}).err == "attn: --heads: expected a whole number from 1 to 1024, got '0' (see 'attn tour --help')\n");
  CHECK(run({"simple", "--dropout-rng", "bogus"}).err ==
        "attn: --dropout-rng: expected default or mkl, got 'bogus' (see 'attn simple --help')\n");
  CHECK(run({"simple", "--dropout", "nan"}).err == "attn: --dropout: expected a probability from 0 to 1, got 'nan' (see 'attn simple --help')\n");
  CHECK(run({"tour", "--kv-groups"}).err == "attn: --kv-groups: 1 required G missing (see 'attn tour --help')\n");

  // The class: every option that takes a value, of every subcommand, given a value its check refuses (or none
  // at all). A usage error then names the option first ("attn: --NAME: ..." or a sentence of the option's,
  // "attn: --text has no tokens"), or is the subcommand refusing the option by name ("attn: attn tour ...").
  const Subcommands s;
  std::size_t refused_checked = 0;
  for (const attn::Sub* sub : s.all) {
    const std::string command = sub->app->get_name();
    // attn present's own refusal without a terminal, whatever its options (attn serve would serve).
    const std::string own = command == "present" ? run({command}).err : "";
    for (const auto& [spec, option] : sub->options) {
      if (spec->is_flag()) continue;
      const std::string name = spec->spellings().front();
      // A path nothing can be made at (--save-npy is refused, exit 1), and a word no number or choice is;
      // attn serve would listen on a host of that name: only its empty values.
      std::vector<std::vector<std::string>> tries{{command, name, ""}, {command, name}};
      if (command != "serve") tries.push_back({command, name, "/dev/null/bogus"});
      for (const auto& args : tries) {
        const auto r = run(args);
        INFO("attn " << command << " " << name << (args.size() == 3 ? " '" + args[2] + "'" : "") << ": " << r.err);
        // A value the option takes (a text, a file's name: missing, exit 1) and a refusal of the subcommand's own.
        if (r.status != 2 || r.err == own) continue;
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        const bool names_it = r.err.rfind("attn: " + name + ": ", 0) == 0 || r.err.rfind("attn: " + name + " ", 0) == 0;
        const bool refuses_it = r.err.rfind("attn: attn ", 0) == 0 && r.err.find(" " + name) != std::string::npos;
        CHECK((names_it || refuses_it));
        if (refused_option(*option) && names_it) ++refused_checked;
      }
    }
  }
  CHECK(refused_checked >= 100);  // the lessons' options that each other lesson, the tour and present refuse
}

TEST_CASE("an empty value after '=' is that empty value and never the next argument", "[cli][errors]") {
  // The examples: the next argument was taken as the value (a directory named --quiet, the text "--seed=5").
  const auto npy = run({"simple", "--save-npy=", "--quiet"});
  CHECK(npy.status == 2);
  CHECK(npy.out.empty());
  CHECK(npy.err == "attn: --save-npy: needs a directory name (see 'attn simple --help')\n");
  CHECK(npy.err == run({"simple", "--save-npy", ""}).err);
  CHECK(!std::filesystem::exists("--quiet"));
  const auto text = run({"mha", "--text=", "--seed=5"});
  CHECK(text.status == 2);
  CHECK(text.out.empty());
  CHECK(text.err == "attn: --text has no tokens (give it a word or more) (see 'attn mha --help')\n");

  // The class: every option that takes a value, of every subcommand, as --NAME= before another option of the
  // subcommand fails exactly as --NAME "" does, whatever follows it.
  const Subcommands s;
  for (const attn::Sub* sub : s.all) {
    const std::string command = sub->app->get_name();
    std::string flag;  // a flag of the subcommand, to follow
    for (const auto& [spec, option] : sub->options)
      if (spec->is_flag() && flag.empty() && !refused_option(*option)) flag = spec->spellings().front();
    REQUIRE(!flag.empty());
    for (const auto& [spec, option] : sub->options) {
      if (spec->is_flag()) continue;
      const std::string name = spec->spellings().front();
      INFO("attn " << command << " " << name << "= " << flag);
      const auto joined = run({command, name + "=", flag});
      const auto apart = run({command, name, "", flag});
      CHECK(joined.status == 2);
      CHECK(joined.out.empty());
      CHECK(joined.err == apart.err);
    }
  }
  // An argument that an option takes as its value stays that value, '=' or not; after "--" nothing is an option.
  const auto value = run({"simple", "--text", "--save-npy=", "--json", "--step", "query"});
  REQUIRE(value.status == 0);
  CHECK(value.out.find("\"text\": \"--save-npy=\"") != std::string::npos);
  CHECK(run({"present", "--", "--text="}).err == "attn: attn present: no lesson '--text=' (attn list names them) (see 'attn present --help')\n");
  // A flag takes no value: --quiet= is --quiet.
  CHECK(run({"simple", "--quiet=", "--step", "res"}).out == run({"simple", "--quiet", "--step", "res"}).out);
}
