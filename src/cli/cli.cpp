// The command line: parse -> Request -> run -> emit. Subcommands and their options come from the lesson
// registry (lessons/registry.cpp) and the option table (cli/options.cpp, cli/commands.cpp); the run from
// the application layer (run/run.hpp), the output from a renderer (render/formats.cpp) or the presenter.
// `attn bench` runs in its own process (cli/bench_process.cpp).
#include "cli/cli.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "cli/bench_process.hpp"
#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "io/cpus.hpp"
#include "kernels/blas.hpp"
#include "text/words.hpp"
#include "present/presenter.hpp"
#include "render/json.hpp"
#include "cli/lesson_list.hpp"
#include "run/emit.hpp"
#include "run/run.hpp"
#include "serve/server.hpp"

namespace attn {

namespace {

std::vector<std::string> lesson_names() {
  std::vector<std::string> names;
  for (const Lesson& lesson : lessons()) names.push_back(lesson.info.name);
  return names;
}

// `attn WORD` where WORD is no subcommand: the nearest one, if one is near.
std::string unknown_command(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  const std::string best = nearest_word(word, names);
  return "attn: unknown command '" + visible(word) + "'" + (best.empty() ? "" : "; did you mean '" + best + "'?") +
         " (see 'attn list' for the lessons, 'attn --help' for everything)\n";
}

// CLI11's messages are one line; name the way to help.
std::string usage_hint(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return " (see 'attn " + sub->get_name() + " --help')";
  return " (see 'attn --help')";
}

// A given option the chosen lesson and mode do not use: a UsageError that says so. `shown`: the subcommand
// lists it in its --help (attn present's: present_takes), so it is taken.
void check_used(const Sub& sub, const LessonMode* mode, const OptionSpec& spec, bool shown) {
  const std::string name = spec.spellings().front();
  if (sub.present) {  // a lesson option it takes is checked against the lessons presented (present_runs)
    if (shown) return;
    if (spec.scope == Scope::Lesson)  // an option of a lesson's other mode: a report, not slides
      for (const Lesson& lesson : lessons())
        for (const LessonMode& mode : lesson.modes)
          if (mode.selector && (mode.takes(*spec.opt) || *mode.selector == *spec.opt)) {
            const std::string command = "attn " + lesson.info.name + " " + lesson_option(*mode.selector).spellings().front();
            throw UsageError("attn present does not take " + name + ", which belongs to the report " + command +
                             " prints instead of the lesson's steps; run " + command);
          }
    if (spec.scope == Scope::Output)
      throw UsageError("attn present draws on the terminal and does not take " + name +
                       " (for a pipe or a file use attn tour or attn LESSON; for slides in a browser, attn LESSON "
                       "--format html)");
    return;
  }
  if (sub.lesson == nullptr) {  // the tour (which has the lesson options only hidden), or bench
    if (spec.scope == Scope::Lesson)
      throw UsageError("attn tour runs every lesson with the book's values and does not take " + name);
    if (spec.scope == Scope::Step)
      throw UsageError("attn tour shows every step of every lesson and does not take " + name +
                       "; give it to one lesson: attn LESSON " + name + " ID");
    return;
  }
  const std::string& lesson = sub.lesson->info.name;
  const auto selector_name = [](const LessonMode& m) { return lesson_option(*m.selector).spellings().front(); };
  if (spec.scope == Scope::Input && !mode->uses_inputs)
    throw UsageError(name + " does not apply with " + selector_name(*mode) + ", which reads no embeddings");
  if (spec.scope != Scope::Lesson || mode->takes(*spec.opt)) return;
  for (const LessonMode& other : sub.lesson->modes)
    if (&other != mode && other.takes(*spec.opt)) {
      if (other.selector) throw UsageError(name + " only applies with " + selector_name(other));
      throw UsageError(name + " does not apply with " + selector_name(*mode));
    }
  throw UsageError("attn " + lesson + " does not take " + name);
}

// The options given on the command line over the defaults of the chosen mode, each checked to apply.
CommandLine effective(const Sub& sub, const LessonMode* mode, const CommandLine& parsed) {
  CommandLine eff;
  if (mode != nullptr) eff.lesson = mode->defaults;
  for (const auto& [spec, option] : sub.options) {
    if (option->count() == 0) continue;
    check_used(sub, mode, *spec, option->get_group() != kRefusedGroup);
    spec->take(eff, parsed);
  }
  // The table's rules, scope by scope in table order; a lesson that cannot take --model at all is told so
  // before the rules of its own options.
  const auto rules = [&](Scope scope) {
    for (const OptionSpec* spec : options_in(scope)) {
      if (!sub.given(*spec)) continue;
      for (const OptionSpec::Rule& r : spec->excludes)
        if (sub.given(r.other)) throw UsageError(r.message);
      for (const OptionSpec::Rule& r : spec->needs)
        if (!sub.given(r.other)) throw UsageError(r.message);
    }
  };
  rules(Scope::Input);
  if (sub.given("--model") && mode != nullptr && !mode->takes_model)
    throw UsageError("attn " + sub.lesson->info.name + " does not take --model: " + mode->no_model_reason);
  for (Scope scope : {Scope::Lesson, Scope::Output}) rules(scope);
  if (eff.output.json) eff.output.format = "json";
  return eff;
}

// The lessons of the tour, or of attn present: those named, in the order given, else every lesson (with
// --model, every lesson that takes it).
std::vector<const Lesson*> deck_lessons(const Sub& sub, const CommandLine& parsed, bool model) {
  std::vector<const Lesson*> out;
  if (!sub.present || parsed.present.lessons.empty()) {
    for (const Lesson& lesson : lessons())
      if (!model || lesson.modes.front().takes_model) out.push_back(&lesson);
    return out;
  }
  for (const std::string& name : parsed.present.lessons) {
    const Lesson* found = find_lesson(name);
    if (found == nullptr) {
      const std::string best = nearest_word(name, lesson_names());
      throw UsageError("attn present: no lesson '" + visible(name) + "'" +
                       (best.empty() ? "" : "; did you mean '" + best + "'?") + " (attn list names them)");
    }
    if (model && !found->modes.front().takes_model)
      throw UsageError("attn present " + name + " does not take --model: " + found->modes.front().no_model_reason);
    out.push_back(found);
  }
  return out;
}

// One lesson of a run: its mode, its values, and those values as its JSON config lists them (the mode's
// options in table order).
LessonRun lesson_run(const Lesson& lesson, const LessonMode& mode, const CommandLine& options) {
  LessonRun run{&lesson, &mode, options.lesson};
  for (const OptionSpec* spec : options_in(Scope::Lesson))
    if (mode.takes(*spec->opt) && !spec->key.empty()) run.options[spec->key] = spec->config(options);
  return run;
}

// The deck's lessons, each in its first mode with the book's values.
std::vector<LessonRun> book_runs(const std::vector<const Lesson*>& deck, const CommandLine& options) {
  std::vector<LessonRun> runs;
  for (const Lesson* lesson : deck) {
    CommandLine book = options;
    book.lesson = lesson->modes.front().defaults;
    runs.push_back(lesson_run(*lesson, lesson->modes.front(), book));
  }
  return runs;
}

// attn present's lessons, each as the book runs it (its first mode) with the lesson options given that it
// takes; a lesson option that none of them takes is a usage error naming it and the lessons that do.
std::vector<LessonRun> present_runs(const Sub& sub, const std::vector<const Lesson*>& deck, const CommandLine& parsed,
                                    const CommandLine& options) {
  std::vector<LessonRun> runs;
  for (const Lesson* lesson : deck) {
    const LessonMode& mode = lesson->modes.front();
    CommandLine values = options;
    values.lesson = mode.defaults;
    for (const OptionSpec* spec : options_in(Scope::Lesson))
      if (sub.given(*spec) && mode.takes(*spec->opt)) spec->take(values, parsed);
    runs.push_back(lesson_run(*lesson, mode, values));
  }
  for (const OptionSpec* spec : options_in(Scope::Lesson)) {
    if (!sub.given(*spec) ||
        std::any_of(deck.begin(), deck.end(), [&](const Lesson* l) { return l->modes.front().takes(*spec->opt); }))
      continue;
    std::vector<std::string> shown, takers;
    for (const Lesson* l : deck) shown.push_back(l->info.name);
    for (const Lesson& l : lessons())
      if (l.modes.front().takes(*spec->opt)) takers.push_back(l.info.name);
    const auto joined = [](const std::vector<std::string>& names) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      return list;
    };
    throw UsageError("attn present: none of the lessons presented (" + joined(shown) + ") takes " +
                     spec->spellings().front() + "; the lessons that take it: " + joined(takers));
  }
  return runs;
}

struct Streams {
  std::ostream& out;
  std::ostream& err;
  std::istream& in;
  const Terminal& term;
  const PresentScreen& screen;
};

// The language the environment asks for (LANGUAGE, LC_ALL, LC_MESSAGES, LANG, as gettext reads them):
// what speaks where --lang is not given.
std::string environment_language(const Terminal& term) {
  return language_of_environment([&term](const char* name) { return term.locale_variable(name); });
}

// A run of `lessons`, in the words of --lang, else of `otherwise` (the environment's language; a web
// request's is English, as the server adds its own language to a request that gives none).
Request request_for(std::string command, std::vector<LessonRun> lessons, const CommandLine& options,
                    const std::string& otherwise) {
  Request r;
  r.command = std::move(command);
  r.lessons = std::move(lessons);
  r.input = options.input;
  r.output = options.output;
  r.words = Words(chosen_language(options.output.lang, otherwise));
  return r;
}

// The threads a run computes on (--threads, below the CPUs the process is given), and for a run on a
// pretrained model, which is long, a line on stderr when OpenBLAS runs slower kernels than the CPU allows.
void prepare_compute(const Request& request, std::ostream& err) {
  set_compute_threads(cpus_of_process(request.output.threads).threads);
  if (!request.input.model.empty())
    if (const auto warning = openblas_core_warning()) err << "attn: " << *warning << "\n";
}

// A lesson or the tour: run, then emit in the chosen format.
int show(const Request& request, const Streams& s) {
  const OutputOptions& o = request.output;
  TextStyle style = resolve_style(o.color, o.heatmap, o.explain, o.quiet, s.term);
  style.scale = o.scale;
  const Format& format = *find_format(o.format);
  const bool pause = o.pause && format.pausable && s.term.stdin_tty && s.term.stdout_tty;  // else ignored
  if (pause && request.input.input == "-")
    throw UsageError("--pause reads Enter from standard input, which --input - reads the embeddings from");
  const auto renderer = format.make(RenderOptions{style});
  prepare_compute(request, s.err);
  const Document doc = run(request, *renderer, RunStreams{s.in, s.err, s.term.stderr_tty});
  Sink sink{s.out, s.in, s.err, pause, style.color, o.save_npy};
  // The process's own standard input, a terminal: --pause reads its keys as pressed (no Enter after q).
  if (pause && &s.in == &std::cin) sink.key_fd = STDIN_FILENO;
  return emit(doc, *renderer, sink);
}

// attn LESSON: the lesson in the mode its options pick.
Request lesson_request(const Sub& sub, const CommandLine& parsed, const std::string& language) {
  const LessonMode& mode = chosen_mode(sub);
  const CommandLine options = effective(sub, &mode, parsed);
  return request_for(sub.lesson->info.name, {lesson_run(*sub.lesson, mode, options)}, options, language);
}

// attn tour: every lesson (with --model, every lesson that takes it) with the book's values, planned first.
Request tour_request(const Sub& sub, const CommandLine& parsed, const std::string& language) {
  const CommandLine options = effective(sub, nullptr, parsed);
  return request_for("tour", book_runs(deck_lessons(sub, parsed, !options.input.model.empty()), options), options,
                     language);
}

// attn present: the lessons named (or every lesson), computed whole, then drawn on the terminal.
int run_present(const Sub& sub, const CommandLine& parsed, const Streams& s) {
  const CommandLine options = effective(sub, nullptr, parsed);
  Request request = request_for(
      "present", present_runs(sub, deck_lessons(sub, parsed, !options.input.model.empty()), parsed, options), options,
      environment_language(s.term));
  request.steps_where_found = true;
  if (options.input.input == "-")
    throw UsageError("attn present reads its keys from standard input, which --input - reads the embeddings from; "
                     "give the embeddings as a file");
  if (!(s.term.stdin_tty && s.term.stdout_tty)) throw UsageError(kNeedsTerminal);  // before any work
  const OutputOptions& o = options.output;
  const TextStyle style = resolve_style(o.color, o.heatmap, o.explain, o.quiet, s.term);
  const auto renderer = find_format(o.format)->make(RenderOptions{style});  // its limits and memory, checked
  prepare_compute(request, s.err);
  const Document doc = run(request, *renderer, RunStreams{s.in, s.err, s.term.stderr_tty});
  PresentOptions p;
  p.reveal = options.present.reveal;
  p.theme = options.present.theme;
  p.scale = o.scale;
  p.color = style.color;
  p.explain = o.explain;
  s.screen(doc, p);
  return kExitOk;
}

int run_list(const CommandLine& parsed, std::ostream& out, const Terminal& term) {
  const Paint paint{resolve_style(When::Auto, When::Never, true, false, term).color};
  const Words words(chosen_language(parsed.list.lang, environment_language(term)));
  out << (parsed.list.json ? dump_json(lesson_list_json(words)) : lesson_table(paint, words));
  return kExitOk;
}

// `attn bench`: checked here, run by attn-bench with the same arguments (and --progress on a terminal).
int run_bench(const Sub& sub, const CommandLine& parsed, const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err, const Terminal& term) {
  check_bench(effective(sub, nullptr, parsed).bench);
  const auto at = std::find(args.begin(), args.end(), "bench");
  std::vector<std::string> bench_args(at + 1, args.end());  // what followed "bench", as CLI11 accepted it
  if (term.stderr_tty) bench_args.push_back("--progress");
  return run_bench_process(bench_args, out, err);
}

// `args` with each `--NAME=` of an option of the subcommand that takes a value given as `--NAME ""`. CLI11
// reads nothing after the '=' as no value at all and takes the next argument as the value (`--save-npy=
// --quiet` wrote into a directory named --quiet, `--text= --seed=5` read the text "--seed=5"); "" meets the
// option's own check. An argument CLI11 takes as the value of the option before it, and everything after
// "--", are left alone.
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

// `args` (without the program's name) parsed into `cli`: CLI11 reads argv in the C form.
void parse(Cli& cli, const std::vector<std::string>& given) {
  const std::vector<std::string> args = empty_values_given(cli.app, given);
  std::vector<const char*> argv{"attn"};
  for (const auto& a : args) argv.push_back(a.c_str());
  cli.app.parse(static_cast<int>(argv.size()), argv.data());
}

// The option of the table a request's key names ("d-out", "no-explain"), among the scopes a lesson or the
// tour takes; nullptr for none.
const OptionSpec* web_option(const std::string& key) {
  for (const OptionSpec& spec : option_table()) {
    if (spec.scope != Scope::Input && spec.scope != Scope::Output && spec.scope != Scope::Step && spec.scope != Scope::Lesson)
      continue;
    for (const std::string& name : spec.spellings())
      if (name == "--" + key) return &spec;
  }
  return nullptr;
}

// attn serve --model DIR ... : the server, with the command line's reading of each request.
int run_serve(const Sub& sub, const CommandLine& parsed, std::ostream& err, const Terminal& term) {
  const ServeCli o = effective(sub, nullptr, parsed).serve;
  ServeSettings settings;
  settings.host = o.host;
  settings.port = o.port;
  settings.model = o.model;
  settings.max_memory = o.max_memory;
  settings.jobs = o.jobs;
  settings.time_limit = o.time_limit;
  settings.log = o.log;
  settings.cpus = cpus_of_process(o.threads);
  settings.language = chosen_language(o.lang, environment_language(term));
  return serve(settings, FrontEnd{web_request, live_bar}, err);
}

}  // namespace

Request web_request(const std::string& command, const Params& params, const std::string& format,
                    const std::string& model) {
  std::vector<std::string> args{command};
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& [key, value] = params[i];
    const OptionSpec* spec = web_option(key);
    if (spec == nullptr) throw UsageError("attn " + command + " has no option --" + visible(key));
    if (!spec->web_refusal.empty()) throw UsageError("--" + key + " " + spec->web_refusal);
    for (std::size_t j = 0; j < i; ++j)
      if (web_option(params[j].first) == spec) throw UsageError("--" + key + " is given twice");
    args.push_back(spec->is_flag() && value.empty() ? "--" + key : "--" + key + "=" + value);
  }
  if (!model.empty()) args.insert(args.end(), {"--model", model});
  args.insert(args.end(), {"--format", format});

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
  throw UsageError("no lesson '" + visible(command) + "' (attn list names them)");
}

LiveBar live_bar(const std::string& lesson, const Params& params, const std::string& error, bool model) {
  LiveBar bar;
  for (const Lesson& l : lessons()) bar.choices.push_back(l.info.name);
  bar.choices.push_back("tour");
  bar.lesson = lesson;
  bar.values = params;
  bar.error = error;
  bar.words = Words(request_language(params, ""));
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

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::istringstream no_input;
  return run_cli(args, out, err, no_input, Terminal{});
}

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::istream& in,
            const Terminal& term) {
  return run_cli(args, out, err, in, term, present);
}

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::istream& in,
            const Terminal& term, const PresentScreen& screen) {
  std::string command;
  try {
    CommandLine parsed;  // what CLI11 stores; only the options given are read from it
    Cli cli;
    setup(cli, parsed);
    try {
      parse(cli, args);
    } catch (const CLI::ParseError& e) {
      if (dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr) {
        out << "attn " ATTN_VERSION "\n";
        return kExitOk;
      }
      if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return cli.app.exit(e, out, err);  // --help
      const bool no_subcommand = cli.app.get_subcommands().empty();
      if (no_subcommand && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !args.empty() &&
          args.front().rfind("-", 0) != 0) {
        err << unknown_command(cli.app, args.front());
        return kExitUsage;
      }
      err << "attn: " << visible(e.what()) << usage_hint(cli.app) << "\n";
      return kExitUsage;
    }

    if (cli.list.app->parsed()) return run_list(parsed, out, term);
    if (cli.bench.app->parsed()) {
      command = "bench";
      return run_bench(cli.bench, parsed, args, out, err, term);
    }
    const Sub* chosen = cli.tour.app->parsed()      ? &cli.tour
                        : cli.present.app->parsed() ? &cli.present
                        : cli.serve.app->parsed()   ? &cli.serve
                                                    : nullptr;
    for (const Sub& sub : cli.lessons)
      if (sub.app->parsed()) chosen = &sub;
    if (chosen == nullptr) {  // plain `attn`: show what there is to learn
      out << cli.app.help();
      return kExitOk;
    }
    command = chosen->app->get_name();
    const Streams streams{out, err, in, term, screen};
    if (chosen == &cli.tour) return show(tour_request(*chosen, parsed, environment_language(term)), streams);
    if (chosen == &cli.present) return run_present(*chosen, parsed, streams);
    if (chosen == &cli.serve) return run_serve(*chosen, parsed, err, term);
    return show(lesson_request(*chosen, parsed, environment_language(term)), streams);
  } catch (...) {
    return report_failure(err, command);
  }
}

}  // namespace attn
