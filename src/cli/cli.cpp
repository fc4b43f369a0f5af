// The command line: parse -> Request -> run -> emit. Subcommands and their options come from the lesson
// registry (lessons/registry.cpp) and the option table (cli/options.cpp, cli/commands.cpp), the Request from
// the options in effect (cli/runs.cpp); the run from the application layer (run/run.hpp), the output from a
// renderer (render/formats.cpp) or the presenter. `attn bench` runs in its own process
// (cli/bench_process.cpp), `attn serve` reads its requests through the command line (cli/front_end.cpp).
#include "cli/cli.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "cli/bench_process.hpp"
#include "cli/commands.hpp"
#include "cli/front_end.hpp"
#include "cli/lesson_list.hpp"
#include "cli/runs.hpp"
#include "core/errors.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "io/cpus.hpp"
#include "kernels/blas.hpp"
#include "present/presenter.hpp"
#include "render/json.hpp"
#include "run/emit.hpp"
#include "run/run.hpp"
#include "serve/server.hpp"
#include "text/language.hpp"
#include "text/words.hpp"

namespace attn {

namespace {

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
  return serve(settings, command_line_front_end(), err);
}

}  // namespace

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
