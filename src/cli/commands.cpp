#include "cli/commands.hpp"

#include "cli/help.hpp"
#include "core/strings.hpp"

namespace attn {

namespace {

void add_each(Sub& sub, Scope scope, CommandLine& target, const CommandLine& defaults) {
  for (const OptionSpec* spec : options_in(scope)) sub.add(*spec, target, defaults, "");
}

// Adds `hidden`: accepted only to say clearly that they do not apply, and left out of --help.
void add_hidden(Sub& sub, const std::vector<const OptionSpec*>& hidden, CommandLine& parsed,
                const CommandLine& defaults) {
  for (const OptionSpec* spec : hidden) sub.add(*spec, parsed, defaults, "", false);
}

// A lesson's subcommand: the input and output options, then its modes' options with the help and defaults
// of the first mode that takes each; every other lesson option hidden.
Sub setup_lesson(CLI::App& app, const Lesson& lesson, CommandLine& parsed) {
  Sub sub;
  sub.lesson = &lesson;
  sub.app = app.add_subcommand(lesson.info.name, lesson.info.summary + " (" + where_in_book(lesson.info) + ")");
  CommandLine defaults;
  defaults.lesson = lesson.modes.front().defaults;
  std::vector<const OptionSpec*> hidden;
  for (const OptionSpec* spec : options_in(Scope::Lesson))
    if (!lesson.takes(*spec->opt)) hidden.push_back(spec);
  add_hidden(sub, hidden, parsed, defaults);
  for (Scope scope : {Scope::Input, Scope::Output, Scope::Step}) add_each(sub, scope, parsed, defaults);
  for (const Lesson::Use& u : lesson.option_uses()) {
    CommandLine mode_defaults;
    mode_defaults.lesson = u.mode->defaults;
    sub.add(lesson_option(u.use->opt), parsed, mode_defaults, u.use->help, true, u.use->default_note);
  }
  return sub;
}

// A lesson option's default as attn present's --help shows it: the lessons' one value, or "each lesson's"
// where they differ (--d-out: 2 in causal, 4 in gqa); "" for other options (their own default is shown).
std::string present_default(const OptionSpec& spec) {
  if (spec.scope != Scope::Lesson || spec.is_flag()) return "";
  if (!spec.default_note.empty()) return spec.default_note;
  std::string shown;
  for (const Lesson& lesson : lessons()) {
    if (!lesson.modes.front().takes(*spec.opt)) continue;
    CommandLine c;
    c.lesson = lesson.modes.front().defaults;
    const std::string d = spec.shown_default(c);
    if (!shown.empty() && d != shown) return "each lesson's";
    shown = d;
  }
  return shown;
}

}  // namespace

void setup(Cli& cli, CommandLine& parsed) {
  CLI::App& app = cli.app;
  app.formatter(make_help_formatter());  // before the subcommands, which copy it
  app.set_version_flag("--version", "attn " ATTN_VERSION, "Print the version and exit");
  app.require_subcommand(0, 1);
  app.footer(kFooter);
  for (const Lesson& lesson : lessons()) cli.lessons.push_back(setup_lesson(app, lesson, parsed));
  const CommandLine defaults;

  cli.list.app = app.add_subcommand("list", "The lessons in book order: section, what each shows, how to run it");
  add_each(cli.list, Scope::List, parsed, defaults);

  cli.tour.app = app.add_subcommand("tour", "Every lesson in book order, each with its book defaults");
  std::vector<const OptionSpec*> not_for_tour = options_in(Scope::Lesson);
  for (const OptionSpec* spec : options_in(Scope::Step)) not_for_tour.push_back(spec);
  add_hidden(cli.tour, not_for_tour, parsed, defaults);
  add_each(cli.tour, Scope::Input, parsed, defaults);
  add_each(cli.tour, Scope::Output, parsed, defaults);

  cli.present.app = app.add_subcommand(
      "present", "Full screen for class: every lesson (or the LESSONs named), one step per slide, clicker keys");
  cli.present.present = true;
  // What it takes is present_takes' (cli/options.cpp); the rest is hidden, accepted only to be refused clearly.
  std::vector<const OptionSpec*> not_for_present;
  for (const OptionSpec& spec : option_table())
    if ((spec.scope == Scope::Lesson || spec.scope == Scope::Output) && !present_takes(spec))
      not_for_present.push_back(&spec);
  add_hidden(cli.present, not_for_present, parsed, defaults);
  for (Scope scope : {Scope::Input, Scope::Output, Scope::Step, Scope::Lesson, Scope::Present})
    for (const OptionSpec* spec : options_in(scope))
      if (present_takes(*spec)) cli.present.add(*spec, parsed, defaults, "", true, present_default(*spec));
  cli.present.app
      ->add_option("LESSON", parsed.present.lessons,
                   "Lessons to present, in the order given (attn list names them); none: every lesson")
      ->type_name("");
  cli.present.app->footer(kPresentFooter);

  cli.serve.app = app.add_subcommand(
      "serve", "The lessons as live pages in a browser on this machine, recomputed as you type (docs/serve.md)");
  add_each(cli.serve, Scope::Serve, parsed, defaults);
  cli.serve.app->footer(kServeFooter);

  cli.bench.app = app.add_subcommand("bench", bench_description());
  add_each(cli.bench, Scope::Bench, parsed, defaults);
  cli.bench.app->footer(bench_footer());
}

// The mode whose selector flag was given, else the lesson itself.
const LessonMode& chosen_mode(const Sub& sub) {
  for (const LessonMode& mode : sub.lesson->modes)
    if (mode.selector && sub.given(lesson_option(*mode.selector))) return mode;
  return sub.lesson->modes.front();
}

// `args` with each `--NAME=` of an option of the subcommand that takes a value given as `--NAME ""`. CLI11
// reads nothing after the '=' as no value at all and takes the next argument as the value (`--save-npy=
// --quiet` wrote into a directory named --quiet, `--text= --seed=5` read the text "--seed=5"); "" meets the
// option's own check. An argument CLI11 takes as the value of the option before it, and everything after
// "--", are left alone.
namespace {

std::vector<std::string> empty_values_given(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> out;
  const CLI::App* sub = nullptr;  // the subcommand, once named
  bool is_value = false;          // the option before takes this argument as its value (`--text --seed=5`)
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!is_value && a == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      return out;
    }
    const std::size_t eq = a.find('=');
    const CLI::Option* o = sub != nullptr && !is_value && a.rfind("--", 0) == 0 ? sub->get_option_no_throw(a.substr(0, eq)) : nullptr;
    if (sub == nullptr)
      for (const CLI::App* s : app.get_subcommands({}))
        if (s->get_name() == a) sub = s;
    is_value = false;
    if (o != nullptr && o->get_items_expected_max() > 0) {  // not a flag
      if (eq == std::string::npos) {
        is_value = o->get_items_expected_min() > 0;
      } else if (eq + 1 == a.size()) {
        out.insert(out.end(), {a.substr(0, eq), ""});
        continue;
      }
    }
    out.push_back(a);
  }
  return out;
}

}  // namespace

// `args` (without the program's name) parsed into `cli`: CLI11 reads argv in the C form.
void parse(Cli& cli, const std::vector<std::string>& given) {
  const std::vector<std::string> args = empty_values_given(cli.app, given);
  std::vector<const char*> argv{"attn"};
  for (const auto& a : args) argv.push_back(a.c_str());
  cli.app.parse(static_cast<int>(argv.size()), argv.data());
}

std::vector<std::pair<std::string, std::string>> other_commands() {
  CommandLine parsed;
  Cli cli;
  setup(cli, parsed);
  std::vector<std::pair<std::string, std::string>> out;
  for (const CLI::App* sub : cli.app.get_subcommands([](const CLI::App*) { return true; })) {
    if (find_lesson(sub->get_name()) != nullptr) continue;
    std::string operand;
    for (const CLI::Option* o : sub->get_options())
      if (o->get_positional()) operand = o->get_name() + (o->get_items_expected_max() > 1 ? " ..." : "");
    out.emplace_back(sub->get_name(), operand);
  }
  return out;
}

}  // namespace attn
