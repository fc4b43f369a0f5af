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

}  // namespace attn
