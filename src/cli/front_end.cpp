#include "cli/front_end.hpp"

#include <algorithm>

#include "cli/commands.hpp"
#include "cli/runs.hpp"
#include "core/errors.hpp"
#include "core/terminal_text.hpp"

namespace attn {

namespace {

// A request's arguments, as the command line reads them.
Request read_request(const std::vector<std::string>& args) {
  CommandLine parsed;
  Cli cli;
  setup(cli, parsed);
  try {
    parse(cli, args);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  if (cli.tour.app->parsed()) return tour_request(cli.tour, parsed, "");
  for (const Sub& sub : cli.lessons)
    if (sub.app->parsed()) return lesson_request(sub, parsed, "");
  throw UsageError("no lesson '" + visible(args.front()) + "' (attn list names them)");
}

// The options of the table a request may name: those of the scopes a lesson or the tour takes.
std::vector<WebOption> web_options() {
  std::vector<WebOption> out;
  for (const OptionSpec& spec : option_table())
    if (spec.scope == Scope::Input || spec.scope == Scope::Output || spec.scope == Scope::Step || spec.scope == Scope::Lesson)
      out.push_back({spec.spellings(), spec.is_flag(), spec.web_refusal});
  return out;
}

// The bar before a request fills it in: what the server's configuration refuses follows the table's rules
// beside --model: --layer and --head only with a model, and with one --d-out, --heads and --kv-groups taken
// by no lesson (LiveControl::refused_with).
LiveBar bar_of(bool model) {
  LiveBar bar;
  for (const Lesson& l : lessons()) bar.choices.push_back(l.info.name);
  bar.choices.push_back("tour");
  const auto names_model = [](const OptionSpec::Rule& r) { return r.other == "--model"; };
  for (const OptionSpec& spec : option_table()) {
    // What the server's configuration refuses: without a model, an option that needs one (--layer, --head)
    // is left out; with one, an option that does not apply with it (--d-out, --heads) stays, taken by no
    // lesson, its title saying why.
    if (!spec.in_live_bar || (!model && std::any_of(spec.needs.begin(), spec.needs.end(), names_model))) continue;
    const bool refused = model && std::any_of(spec.excludes.begin(), spec.excludes.end(), names_model);
    LiveControl c;
    if (refused) c.refused_with = "--model";
    c.key = spec.spellings().front().substr(2);
    c.type_name = spec.type_name;
    c.help = spec.help;
    c.values = spec.values;
    const auto dash = spec.range.find(" to ");
    if (dash != std::string::npos && spec.range.find_first_not_of("0123456789. to") == std::string::npos) {
      c.min = spec.range.substr(0, dash);
      c.max = spec.range.substr(dash + 4);
    }
    for (const Lesson& l : lessons()) {
      if (refused) break;
      const LessonMode& mode = l.modes.front();
      CommandLine defaults;
      defaults.lesson = mode.defaults;
      const bool takes = spec.scope == Scope::Lesson ? mode.takes(*spec.opt) : mode.uses_inputs;
      if (takes) c.takers[l.info.name] = spec.default_note.empty() ? spec.shown_default(defaults) : spec.default_note;
    }
    if (spec.scope != Scope::Lesson && !refused)
      c.takers["tour"] = spec.default_note.empty() ? spec.shown_default(CommandLine{}) : spec.default_note;
    bar.controls.push_back(std::move(c));
  }
  return bar;
}

}  // namespace

FrontEnd command_line_front_end() { return FrontEnd{read_request, web_options(), bar_of}; }

}  // namespace attn
