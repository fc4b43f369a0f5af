#pragma once
// Every option of every subcommand, declared once (options.cpp): its name, value type, range, default,
// help, and for a lesson option the LessonConfig field it sets and its JSON config key. The command line
// (cli/commands.cpp, cli.cpp), the man page and bash completion (tools/docgen.cpp) and the README check
// (tests) all read this table; the input sources' entries are made from their own declarations
// (inputs/source.hpp). Which lesson takes which lesson option is said by the lesson's registry entry.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/bench_options.hpp"
#include "core/limits.hpp"
#include "lessons/config.hpp"
#include "inputs/sources.hpp"
#include "present/presenter.hpp"
#include "render/style.hpp"
#include "run/run.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace attn {

struct ListOptions {
  bool json = false;  // attn list --json
  std::string lang;   // attn list --lang
};

// attn present [LESSON ...]
struct PresentCli {
  std::vector<std::string> lessons;  // the positional lesson names; none: every lesson (the tour)
  bool reveal = false;               // --reveal
  Theme theme = Theme::Dark;         // --theme
};

// attn serve
struct ServeCli {
  std::string host = "127.0.0.1";  // --host: loopback unless another address is named
  std::size_t port = 8000;         // --port; 0 picks a free one
  std::string model;               // --model DIR: read once at start, shared by every request
  std::size_t max_memory = kDefaultMemoryBudget;  // --max-memory: the whole server's, model included
  std::size_t jobs = 2;            // --jobs: computations at once; more get 503
  std::size_t time_limit = 30;     // --time-limit: seconds per computation
  std::optional<std::size_t> threads;  // --threads: at most this many in all, shared among the jobs
  bool log = false;                // --log: one line per request on stderr
  std::string lang;                // --lang: the language of a request that gives none ("": the environment's)
};

// Everything a command line can say, each part with its defaults.
struct CommandLine {
  InputOptions input;
  OutputOptions output;
  LessonConfig lesson;
  BenchOptions bench;
  ListOptions list;
  PresentCli present;
  ServeCli serve;
};

// Which subcommands an option belongs to.
enum class Scope {
  Input,   // every lesson and attn tour
  Output,  // every lesson and attn tour
  Step,    // every lesson (not the tour: its lessons have different steps)
  Lesson,  // the lessons whose registry entry lists it (OptionSpec::opt)
  Bench,   // attn bench
  List,    // attn list
  Present, // attn present (which also takes the Input options, --color and --max-memory)
  Serve,   // attn serve
};

struct OptionSpec {
  Scope scope;
  std::optional<Opt> opt;  // the lesson option, for Scope::Lesson
  std::string name;        // "--d-out"; both spellings of a negatable flag: "--explain,!--no-explain"
  std::string type_name;   // "N"; empty for a flag
  std::string help;        // what it means (a lesson's registry entry may say more)
  std::string key;         // the JSON "config" key of a lesson option
  std::vector<std::string> values;  // the accepted words of an enum-like option (help, man page, completion)
  std::string range;       // "1 to 64", for the man page; empty when the type says it all
  std::string default_note;  // the default in words where it is not one value ("the book's")
  bool in_present = false;   // an output option attn present takes too (--color, --scale, --explain, --max-memory)
  // attn serve: why a request may not give it (it names a file on the server, or the server decides it);
  // empty: a request may. And whether the live page's control bar has it.
  std::string web_refusal;
  bool in_live_bar = false;

  // What a combination with other options means: given with `other` (excludes) or without it (needs), the
  // option is refused with `message`, a whole sentence. Checked scope by scope in table order
  // (cli.cpp's effective), before any work.
  struct Rule {
    std::string other;    // "--model"
    std::string message;  // "--d-in does not apply with --model, whose own trained embeddings are used"
  };
  std::vector<Rule> excludes, needs;

  // How the value is read, checked, stored and shown: one object typed by the option's field (options.cpp).
  struct Binding;
  std::shared_ptr<const Binding> binding;

  // Adds the option to `app`, storing into `target` and showing the default `defaults` holds.
  CLI::Option* add(CLI::App* app, CommandLine& target, const CommandLine& defaults, const std::string& help) const;
  // Copies this option's value (given on the command line) from `from` into `to`.
  void take(CommandLine& to, const CommandLine& from) const;
  // A lesson option's value in the JSON config (an option with a `key`).
  nlohmann::ordered_json config(const CommandLine& c) const;
  // The default as help shows it ("" for none).
  std::string shown_default(const CommandLine& c) const;

  bool is_flag() const { return type_name.empty(); }
  // The long names: "--explain,!--no-explain" -> {"--explain", "--no-explain"}.
  std::vector<std::string> spellings() const;
};

// The whole table, in the order the JSON config lists lesson options.
const std::vector<OptionSpec>& option_table();
// The lesson option `o`.
const OptionSpec& lesson_option(Opt o);
// Every option of `scope`, in table order.
std::vector<const OptionSpec*> options_in(Scope scope);
// Whether attn present takes `spec`: the input options, --step, its own, the output options marked
// in_present, and every lesson option a lesson takes as the book runs it (its first mode: the other modes,
// kv-cache --estimate and gqa --kv-cache, are reports, not slides). attn present applies each to the
// lessons that take it (cli.cpp).
bool present_takes(const OptionSpec& spec);

// Option checks with messages a student can act on (CLI11's own would print the range as doubles and
// would read "-1" as a huge unsigned number).
std::string whole_number_error(const std::string& value, std::uint64_t min, std::uint64_t max);

}  // namespace attn
