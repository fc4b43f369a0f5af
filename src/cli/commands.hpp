#pragma once
// attn's subcommands as a CLI11 app, built from the lesson registry and the option table: each lesson
// with its modes' options (every other lesson option hidden, so that using one is a clear usage error),
// list, tour, present and bench.
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/help.hpp"
#include "cli/options.hpp"
#include "lessons/registry.hpp"

namespace attn {

// A subcommand and the options it was given, each with the table entry it came from.
struct Sub {
  CLI::App* app = nullptr;
  const Lesson* lesson = nullptr;  // for a lesson's subcommand
  bool present = false;            // attn present (else, without a lesson, the tour or bench)
  std::vector<std::pair<const OptionSpec*, CLI::Option*>> options;

  void add(const OptionSpec& spec, CommandLine& target, const CommandLine& defaults, const std::string& help,
           bool shown = true, const std::string& default_note = "") {
    CLI::Option* o = spec.add(app, target, defaults, help.empty() ? spec.help : help);
    if (!default_note.empty()) o->default_str(default_note);
    if (!shown) o->group(kRefusedGroup);  // accepted by the parser only to say clearly that it does not apply
    options.emplace_back(&spec, o);
  }
  bool given(const std::string& name) const {
    for (const auto& [s, o] : options)
      if (s->spellings().front() == name) return o->count() > 0;
    return false;
  }
  bool given(const OptionSpec& spec) const {
    for (const auto& [s, o] : options)
      if (s == &spec) return o->count() > 0;
    return false;
  }
};

// attn and its subcommands.
struct Cli {
  CLI::App app{kDescription, "attn"};
  std::vector<Sub> lessons;
  Sub list, tour, present, bench, serve;
};

// Builds every subcommand of `cli.app`; CLI11 stores what it parses into `parsed`.
void setup(Cli& cli, CommandLine& parsed);

// The lesson mode whose selector flag was given (attn kv-cache --estimate), else the lesson itself.
const LessonMode& chosen_mode(const Sub& sub);

// `args` (without the program's name) parsed into `cli` (CLI::ParseError as CLI11 throws it), each `--NAME=`
// of an option that takes a value read as the empty value it is.
void parse(Cli& cli, const std::vector<std::string>& args);

// The subcommands other than the lessons (list, tour, present, serve, bench), in the order the command line
// adds them, each with its optional operand ("LESSON ..." for present; "" for none): attn-docgen's SYNOPSIS,
// which so cannot leave a subcommand out.
std::vector<std::pair<std::string, std::string>> other_commands();

}  // namespace attn
