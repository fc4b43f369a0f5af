// The command line: parse -> load -> run -> render. Subcommands and their options come from the lesson
// registry (lessons/registry.cpp) and the option table (cli/options.cpp); the output from a renderer
// (render/formats.cpp). `attn bench` runs in its own process (cli/bench_process.cpp).
#include "cli/cli.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli/bench_process.hpp"
#include "cli/options.hpp"
#include "core/errors.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "core/torch_random.hpp"
#include "model/gpt2_model.hpp"
#include "inputs/embeddings.hpp"
#include "inputs/model.hpp"
#include "inputs/text.hpp"
#include "lessons/registry.hpp"
#include "render/json.hpp"
#include "render/npy.hpp"
#include "present/presenter.hpp"
#include "render/renderer.hpp"

namespace attn {

namespace {

const char* const kDescription =
    "attn -- every step of attention, as chapter 3 of \"Build a Large Language Model\n"
    "(From Scratch)\" computes it.\n"
    "\n"
    "Each subcommand is one lesson of the chapter, in book order. It runs on the book's\n"
    "six tokens, \"Your journey starts with one step\" (or your own --input), and shows\n"
    "every intermediate score, weight and context tensor under the variable name the\n"
    "book uses, with a short explanation, the PyTorch line that computes it, and the\n"
    "numbers exactly as PyTorch prints them in the book.\n";

const char* const kFooter =
    "Examples:\n"
    "  attn list                      the lessons in book order\n"
    "  attn simple                    one query, step by step (start here)\n"
    "  attn present                   every lesson full screen, for class\n"
    "  attn present causal --reveal   the code first, the result on the next key\n"
    "  attn trainable --seed 123      exercise 3.1: sa_v1 with sa_v2's weights\n"
    "  attn kv-cache                  decoding token by token: the KV cache growing\n"
    "  attn kv-cache --estimate       KV-cache memory: multi-head vs grouped-query\n"
    "  attn all-tokens --json | jq -c '.steps[] | select(.id == \"attn_weights\").data'\n"
    "\n"
    "Run 'attn LESSON --help' for a lesson's options. JSON schema: docs/json.md.";

const char* const kBenchFooter =
    "All four compute the same function on the same weights (max|diff| is each one's\n"
    "distance from mha):\n"
    "  wrapper  section 3.6.1: a CausalAttention per head, their outputs concatenated\n"
    "  mha      section 3.6.2: one projection per Q/K/V, heads as views, the full\n"
    "           (b, h, T, T) scores\n"
    "  fused    mha's weights on a tiled kernel with an online softmax: no (T, T)\n"
    "           matrix, no work above the diagonal, every core; its kernels are\n"
    "           chosen by the CPU's feature flags (AVX-512, AVX2 or portable)\n"
    "  gqa      grouped-query attention: --kv-groups key/value heads shared by the\n"
    "           query heads, fused\n"
    "Timing: a warm-up, then the median of --repeats runs. GFLOP/s counts useful work\n"
    "only (the projections and the causal half of the scores, not the masked half);\n"
    "%peak compares it with this machine's measured FMA peak, %SGEMM with its\n"
    "matrix-product rate. The default shape is GPT-2 small's and takes about 20 s on\n"
    "two cores.\n"
    "--decode times generation instead: one new token attending to a KV cache of each\n"
    "--cache length, MHA and GQA, in microseconds per token and in GB/s against a\n"
    "copy of memory measured in the same run (about 30 s).\n"
    "Examples: attn bench --tokens 256 --repeats 3; attn bench --decode --cache 1024.\n"
    "Figures: docs/performance.md.";

const char* const kPresentFooter =
    "Keys (presenter clickers send these too):\n"
    "  -> Space PageDown Enter   next step      <- PageUp Backspace  previous\n"
    "  Home End                  first, last    [ ]                  lessons\n"
    "  g 12 Enter                step 12        Up Down              scroll a step\n"
    "  n                         every number   s                    row scale\n"
    "  b .                       blank screen   ?                    help\n"
    "  q Esc Ctrl-C              quit (the terminal is restored)\n"
    "Colour follows --color, NO_COLOR and TERM; without it the presenter is\n"
    "monochrome, highlights in reverse video. Examples: attn present; attn present\n"
    "causal mha --reveal; attn present --theme light --text \"The cat sat\".\n"
    "Guide: docs/classroom.md.";

// CLI11's help, wrapped to 80 columns, and a negatable flag named as "--explain, --no-explain" rather than
// CLI11's "--explain,--no-explain{false}".
class HelpFormatter : public CLI::Formatter {
 public:
  static constexpr std::size_t kWidth = 80;

  std::string make_option_name(const CLI::Option* opt, bool positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, positional), out;
    bool in_braces = false;
    for (char c : name) {
      if (c == '{') in_braces = true;
      if (!in_braces) out += c == ',' ? std::string(", ") : std::string(1, c);
      if (c == '}') in_braces = false;
    }
    return out;
  }
  std::string make_option(const CLI::Option* opt, bool positional) const override {
    return entry(make_option_name(opt, positional) + make_option_opts(opt), make_option_desc(opt));
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return entry(sub->get_display_name(true), sub->get_description());
  }
  // Each paragraph of the description wrapped on its own.
  std::string make_description(const CLI::App* app) const override {
    const std::string text = CLI::Formatter::make_description(app);
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t end = std::min(text.find("\n\n", at), text.size());
      for (const auto& line : wrap_words(text.substr(at, end - at), kWidth)) out += line + "\n";
      if (end < text.size()) out += "\n";
      at = end + 2;
    }
    return out;
  }

 private:
  // The name in the left column, the description wrapped in the right one (CLI11 indents the lines).
  std::string entry(const std::string& name, const std::string& description) const {
    std::string wrapped;
    for (const auto& line : wrap_words(description, kWidth - column_width_))
      wrapped += (wrapped.empty() ? "" : "\n") + line;
    std::ostringstream out;
    CLI::detail::format_help(out, name, wrapped, column_width_);
    return out.str();
  }
};

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
    if (!shown) o->group("");  // accepted by the parser only to say clearly that it does not apply
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

struct Cli {
  CLI::App app{kDescription, "attn"};
  std::vector<Sub> lessons;
  Sub list, tour, present, bench;
};

void add_each(Sub& sub, Scope scope, CommandLine& target, const CommandLine& defaults) {
  for (const OptionSpec* spec : options_in(scope)) sub.add(*spec, target, defaults, "");
}

// Adds `hidden` (accepted only to say clearly that they do not apply), then the help flag, so that CLI11's
// help lists the visible options under "Options" without a stray blank line for the hidden group.
void add_hidden(Sub& sub, const std::vector<const OptionSpec*>& hidden, CommandLine& parsed,
                const CommandLine& defaults) {
  sub.app->set_help_flag();
  for (const OptionSpec* spec : hidden) sub.add(*spec, parsed, defaults, "", false);
  sub.app->set_help_flag("-h,--help", "Print this help message and exit");
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

void setup(Cli& cli, CommandLine& parsed) {
  CLI::App& app = cli.app;
  app.formatter(std::make_shared<HelpFormatter>());  // before the subcommands, which copy it
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
  std::vector<const OptionSpec*> not_for_present = not_for_tour;
  for (const OptionSpec* spec : options_in(Scope::Output))
    if (spec->name != "--color" && spec->name != "--max-memory") not_for_present.push_back(spec);
  add_hidden(cli.present, not_for_present, parsed, defaults);
  add_each(cli.present, Scope::Input, parsed, defaults);
  for (const OptionSpec* spec : options_in(Scope::Output))
    if (spec->name == "--color" || spec->name == "--max-memory") cli.present.add(*spec, parsed, defaults, "");
  add_each(cli.present, Scope::Present, parsed, defaults);
  cli.present.app
      ->add_option("LESSON", parsed.present.lessons,
                   "Lessons to present, in the order given (attn list names them); none: every lesson")
      ->type_name("");
  cli.present.app->footer(kPresentFooter);

  cli.bench.app = app.add_subcommand(
      "bench", "Time the chapter's multi-head attention implementations (wrapper, mha, fused, gqa) at GPT-2 size");
  add_each(cli.bench, Scope::Bench, parsed, defaults);
  cli.bench.app->footer(kBenchFooter);
}

// Levenshtein distance, for "did you mean": a dozen lines, where a library would be a dependency for one loop.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> lesson_names() {
  std::vector<std::string> names;
  for (const Lesson& lesson : lessons()) names.push_back(lesson.info.name);
  return names;
}

// Of `names`, the one nearest `word` if one is near (mha_wrapper -> mha-wrapper), else "".
std::string nearest(const std::string& word, const std::vector<std::string>& names) {
  std::string normal = word;
  for (char& c : normal) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, normal.size() / 3) + 1;
  for (const std::string& name : names) {
    const std::size_t d = edit_distance(normal, name);
    if (d < best_distance) best_distance = d, best = name;
  }
  return best;
}

// `attn WORD` where WORD is no subcommand: the nearest one, if one is near.
std::string unknown_command(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  const std::string best = nearest(word, names);
  return "attn: unknown command '" + visible(word) + "'" + (best.empty() ? "" : "; did you mean '" + best + "'?") +
         " (see 'attn list' for the lessons, 'attn --help' for everything)\n";
}

// CLI11's messages are one line; name the way to help.
std::string usage_hint(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return " (see 'attn " + sub->get_name() + " --help')";
  return " (see 'attn --help')";
}

// The mode whose selector flag was given, else the lesson itself.
const LessonMode& chosen_mode(const Sub& sub) {
  for (const LessonMode& mode : sub.lesson->modes)
    if (mode.selector && sub.given(lesson_option(*mode.selector))) return mode;
  return sub.lesson->modes.front();
}

// A given option the chosen lesson and mode do not use: a UsageError that says so.
void check_used(const Sub& sub, const LessonMode* mode, const OptionSpec& spec) {
  const std::string name = spec.spellings().front();
  if (sub.present) {
    if (spec.scope == Scope::Lesson)
      throw UsageError("attn present runs each lesson with the book's values and does not take " + name +
                       "; for one lesson's options use attn LESSON " + name + " --pause");
    if (spec.scope == Scope::Output || spec.scope == Scope::Step)
      throw UsageError("attn present draws on the terminal and does not take " + name +
                       " (for a pipe or a file use attn tour or attn LESSON)");
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
    check_used(sub, mode, *spec);
    spec->take(eff, parsed);
  }
  const bool model = sub.given("--model");
  for (const char* with_text : {"--d-in", "--embedding-seed"}) {
    if (sub.given(with_text) && model)
      throw UsageError(std::string(with_text) + " does not apply with --model, whose own trained embeddings are used");
    if (sub.given(with_text) && !sub.given("--text"))
      throw UsageError(std::string(with_text) + " only applies with --text (it sizes and seeds the embeddings of your "
                       "own sentence)");
  }
  for (const char* with_model : {"--layer", "--head"})
    if (sub.given(with_model) && !model)
      throw UsageError(std::string(with_model) + " only applies with --model (it picks a block or a head of a "
                       "pretrained GPT-2)");
  if (model && mode != nullptr && !mode->takes_model)
    throw UsageError("attn " + sub.lesson->info.name + " does not take --model: " + mode->no_model_reason);
  // The real layer fixes the shapes the book leaves open.
  for (const char* shape : {"--d-out", "--heads", "--qkv-bias", "--kv-groups"})
    if (model && sub.given(shape))
      throw UsageError(std::string(shape) + " does not apply with --model: the layer's real weights set d_out, the "
                       "heads and the bias (pick a head with --head where a lesson uses one)");
  if (eff.output.json) {
    if (sub.given("--format")) throw UsageError("--json and --format exclude each other (--json is --format json)");
    eff.output.format = "json";
  }
  return eff;
}

// The inputs the options ask for: --random, --input (a file, or - for `stdin_stream`), or the bundled file.
Inputs load_inputs(const InputOptions& opt, std::istream& stdin_stream, const std::function<void(std::size_t)>& check_memory) {
  if (opt.random && !opt.input.empty()) throw UsageError("--input and --random exclude each other");
  if (opt.text && (opt.random || !opt.input.empty()))
    throw UsageError(std::string("--text and ") + (opt.random ? "--random" : "--input") + " exclude each other");
  if (!opt.model.empty() && (opt.random || !opt.input.empty()))
    throw UsageError(std::string("--model and ") + (opt.random ? "--random" : "--input") +
                     " exclude each other (--model embeds --text, or the book's sentence, itself)");
  if (!opt.model.empty()) return inputs_from_model(opt.model, opt.text.value_or(kBookSentence), opt.layer, check_memory);
  if (opt.text) return inputs_from_text(*opt.text, opt.d_in, opt.embedding_seed);
  if (!opt.random) return load_embeddings(opt.input.empty() ? default_embeddings_path() : opt.input, stdin_stream);
  const auto [n, d] = *opt.random;
  Inputs in;
  TorchGenerator gen(0);
  in.embeddings = gen.rand(n, d);  // (n, d)
  for (std::size_t i = 0; i < n; ++i) in.tokens.push_back("x" + std::to_string(i + 1));
  in.source = "torch.rand(" + std::to_string(n) + ", " + std::to_string(d) + ") after torch.manual_seed(0)";
  return in;
}

// Runs one mode of a lesson and completes its config: "input" (when the mode reads inputs), every option
// of the mode in option-table order, then what the lesson recorded itself (a resolved value replaces its
// option's entry in place).
Trace run_mode(const LessonMode& mode, const Inputs& in, const CommandLine& options, const Selection& selection) {
  Trace t = mode.run(in, options.lesson, selection);
  if (!t.resolved()) throw std::logic_error("lesson " + t.info.name + " returned without Trace::resolve()");
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  if (mode.uses_inputs) config["input"] = in.source;
  if (mode.uses_inputs && !options.input.model.empty()) {  // what reproduces the inputs
    config["model"] = options.input.model;
    config["text"] = options.input.text.value_or(kBookSentence);
    config["layer"] = options.input.layer;
  } else if (mode.uses_inputs && options.input.text) {
    config["text"] = *options.input.text;
    config["d_in"] = options.input.d_in;
    config["embedding_seed"] = options.input.embedding_seed;
  }
  for (const OptionSpec* spec : options_in(Scope::Lesson))
    if (mode.takes(*spec->opt) && spec->config) config[spec->key] = spec->config(options);
  for (const auto& [key, value] : t.config.items()) config[key] = value;
  t.config = std::move(config);
  return t;
}

// "computing mha... 2.4 s" on `err` while a lesson takes longer than a second, erased when it ends. Only
// when stderr is a terminal: never in a pipe or a log, never on stdout.
class Progress {
 public:
  Progress(bool enabled, std::string what, std::ostream& err) : err_(err) {
    if (!enabled) return;
    worker_ = std::thread([this, what = std::move(what)] {
      const auto start = std::chrono::steady_clock::now();
      std::unique_lock<std::mutex> lock(mutex_);
      if (done_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) return;
      while (!done_) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        char line[160];
        std::snprintf(line, sizeof line, "\rattn: computing %s... %.1f s", what.c_str(), s);
        err_ << line << std::flush;
        shown_ = true;
        done_cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; });
      }
    });
  }
  ~Progress() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    worker_.join();
    if (shown_) err_ << "\r\x1b[K" << std::flush;
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  std::ostream& err_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  bool shown_ = false;
};

// Writes the chunks; with pause, waits for Enter after each step and stops on q or end of input.
void emit(const std::vector<Chunk>& chunks, bool pause, std::ostream& out, std::istream& in, const Paint& paint) {
  // pause is only ever set when stdin and stdout are terminals.
  if (!pause) {
    out << join(chunks);
    return;
  }
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    out << chunks[i].text << std::flush;
    if (!chunks[i].pause_after || i + 1 == chunks.size()) continue;
    out << paint.dim("-- Enter: next step, q: quit (back and forth: attn present) --") << std::flush;
    std::string line;
    if (!std::getline(in, line) || line == "q" || line == "Q") {
      out << "\n" << std::flush;
      return;
    }
    out << "\x1b[1A\x1b[2K" << std::flush;  // a terminal: take the prompt line away again
  }
}

// "1.5 GiB", "640 MiB": a byte count as the memory budget's message gives it.
std::string size_words(std::size_t bytes) {
  char out[32];
  if (bytes >= (std::size_t{1} << 30)) {
    std::snprintf(out, sizeof out, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  } else {
    std::snprintf(out, sizeof out, "%zu MiB", (bytes + (1u << 20) - 1) >> 20);
  }
  return out;
}

// The memory budget (--max-memory), checked on a lesson's plan before any of it is computed: the process's
// base, what the traces before it keep (the tour's), the plan's own peak, and the renderer's working
// memory. `planned` is the run's document with the plan as its last trace.
std::size_t memory_needed(const Document& planned, const Renderer& renderer, bool save_npy) {
  std::size_t need = saturating_sum(kBaseBytes, planned.traces.back().planned_bytes());
  need = saturating_sum(need, planned.traces.back().inputs.held_bytes);  // --model: the weights, the tokenizer
  for (std::size_t i = 0; i + 1 < planned.traces.size(); ++i) need = saturating_sum(need, planned.traces[i].shown_bytes());
  need = saturating_sum(need, renderer.working_bytes(planned));
  return save_npy ? saturating_sum(need, npy_working_bytes(planned)) : need;
}

// Refused with a usage error (exit 2) that gives the estimate and the budget.
void check_budget(const std::string& command, std::size_t need, std::size_t budget) {
  if (need <= budget) return;
  throw UsageError("attn " + command + " would need an estimated " + size_words(need) +
                   " of memory, more than the budget of " + size_words(budget) +
                   "; use fewer tokens, dimensions, heads or a smaller batch, or raise it with --max-memory");
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
      const std::string best = nearest(name, lesson_names());
      throw UsageError("attn present: no lesson '" + visible(name) + "'" +
                       (best.empty() ? "" : "; did you mean '" + best + "'?") + " (attn list names them)");
    }
    if (model && !found->modes.front().takes_model)
      throw UsageError("attn present " + name + " does not take --model: " + found->modes.front().no_model_reason);
    out.push_back(found);
  }
  return out;
}

// While --save-npy's files are staged and moved: a signal that would end the process is noted instead,
// so the staged files can be removed (or the moves finished or undone) before it ends. SIGPIPE is ignored
// (a closed pipe becomes a write error on stdout); SIGINT, SIGTERM and SIGHUP interrupt a --pause prompt
// (no SA_RESTART). A signal the process ignored already (nohup, `cmd &`) stays ignored. end() gives each
// its old handling back and raises the ones that came, so the process ends as it would have; so does the
// destructor, after which a signal held back by block() arrives.
constexpr std::array<int, 4> kSaveSignals{SIGPIPE, SIGINT, SIGTERM, SIGHUP};
volatile std::sig_atomic_t g_save_signals[kSaveSignals.size()] = {};
extern "C" void note_save_signal(int signal) {
  for (std::size_t i = 0; i < kSaveSignals.size(); ++i)
    if (kSaveSignals[i] == signal) g_save_signals[i] = 1;
}

class SaveSignals {
 public:
  SaveSignals() {
    struct sigaction note {};
    note.sa_handler = note_save_signal;
    sigemptyset(&note.sa_mask);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    for (std::size_t i = 0; i < kSaveSignals.size(); ++i) {
      g_save_signals[i] = 0;
      sigaction(kSaveSignals[i], nullptr, &old_[i]);
      const bool ignored = old_[i].sa_handler == SIG_IGN;
      sigaction(kSaveSignals[i], kSaveSignals[i] == SIGPIPE || ignored ? &ignore : &note, nullptr);
    }
  }
  bool caught() const {
    for (const auto flag : g_save_signals)
      if (flag != 0) return true;
    return false;
  }
  // Holds the signals back until the handling is restored (the moves take milliseconds).
  void block() {
    sigset_t set;
    sigemptyset(&set);
    for (const int signal : kSaveSignals) sigaddset(&set, signal);
    blocked_ = sigprocmask(SIG_BLOCK, &set, &old_mask_) == 0;
  }
  // The old handling back, and each signal that came raised under it; SIGPIPE too for a write that failed
  // with EPIPE (`error`), which would have ended the process by SIGPIPE.
  void end(int error) {
    restore();
    if (error == EPIPE) std::raise(SIGPIPE);
  }
  ~SaveSignals() { restore(); }
  SaveSignals(const SaveSignals&) = delete;
  SaveSignals& operator=(const SaveSignals&) = delete;

 private:
  void restore() {
    if (restored_) return;
    restored_ = true;
    for (std::size_t i = 0; i < kSaveSignals.size(); ++i) sigaction(kSaveSignals[i], &old_[i], nullptr);
    for (std::size_t i = 0; i < kSaveSignals.size(); ++i)
      if (g_save_signals[i] != 0) std::raise(kSaveSignals[i]);  // noted while the files waited
    if (blocked_) sigprocmask(SIG_SETMASK, &old_mask_, nullptr);  // one held back arrives now
  }
  std::array<struct sigaction, kSaveSignals.size()> old_{};
  sigset_t old_mask_{};
  bool blocked_ = false, restored_ = false;
};

// A lesson (`sub.lesson`), the tour or attn present: load, run, render (or present).
int run_lessons(const Sub& sub, const CommandLine& parsed, std::ostream& out, std::ostream& err, std::istream& in,
                const Terminal& term) {
  const LessonMode* mode = sub.lesson != nullptr ? &chosen_mode(sub) : nullptr;
  const CommandLine options = effective(sub, mode, parsed);
  const std::vector<const Lesson*> deck = deck_lessons(sub, parsed, !options.input.model.empty());
  if (sub.present && options.input.input == "-")
    throw UsageError("attn present reads its keys from standard input, which --input - reads the embeddings from; "
                     "give the embeddings as a file");
  if (sub.present && !(term.stdin_tty && term.stdout_tty)) throw UsageError(kNeedsTerminal);  // before any work
  const OutputOptions& o = options.output;
  const TextStyle style = resolve_style(o.color, o.heatmap, o.explain, o.quiet, term);
  const Format& format = *find_format(o.format);
  const bool pause = o.pause && format.pausable && term.stdin_tty && term.stdout_tty;  // else ignored
  if (pause && options.input.input == "-")
    throw UsageError("--pause reads Enter from standard input, which --input - reads the embeddings from");
  const std::string command = sub.lesson != nullptr ? sub.lesson->info.name : sub.present ? "present" : "tour";
  const Inputs inputs = load_inputs(options.input, in, [&](std::size_t need) { check_budget(command, need, o.max_memory); });
  if (!o.save_npy.empty()) prepare_npy_dir(o.save_npy);  // checked before the work; nothing is created yet

  Document doc;
  doc.command = command;
  doc.only = o.steps;
  const auto renderer = format.make(RenderOptions{style});
  // Each lesson plans its steps first; the renderer's limits and the memory budget are checked on the
  // plan (with the traces run before it), before any step is computed.
  // The plan joins the document (not a copy of it: that would copy every tensor the tour holds) while
  // it is checked. `peak` collects the tour's largest need.
  std::size_t peak = 0;
  const auto checks = [&](Document& before, bool whole_tour) {
    return [&, planned = &before, whole_tour](const Trace& plan) {
      planned->traces.push_back(plan);
      try {
        renderer->check(*planned);
        const std::size_t need = memory_needed(*planned, *renderer, !o.save_npy.empty());
        peak = std::max(peak, need);
        if (!whole_tour) check_budget(plan.info.name, need, o.max_memory);
      } catch (...) {
        planned->traces.pop_back();
        throw;
      }
      planned->traces.pop_back();
    };
  };
  const Selection selection{o.steps, checks(doc, false)};
  const auto tour_options = [&](const Lesson& lesson) {
    CommandLine book = options;
    book.lesson = lesson.modes.front().defaults;
    return book;
  };
  if (mode == nullptr) {
    // The tour: every lesson's plan is checked, as one run, before the first lesson computes anything.
    Document plans;
    plans.command = doc.command;
    plans.only = doc.only;
    for (const Lesson* lesson : deck) {
      Selection plan_only{o.steps, checks(plans, true), true};
      plans.traces.push_back(run_mode(lesson->modes.front(), inputs, tour_options(*lesson), plan_only));
    }
    check_budget(doc.command, peak, o.max_memory);  // the largest need of any point of the tour
  }
  {
    const Progress progress(term.stderr_tty, doc.command, err);
    if (mode != nullptr) {
      doc.traces.push_back(run_mode(*mode, inputs, options, selection));
    } else {
      for (const Lesson* lesson : deck)
        doc.traces.push_back(run_mode(lesson->modes.front(), inputs, tour_options(*lesson), selection));
    }
  }
  if (sub.present) {
    PresentOptions p;
    p.reveal = options.present.reveal;
    p.theme = options.present.theme;
    p.per_row = options.present.scale == HeatScale::Row;
    p.color = style.color;
    present(doc, p);
    return kExitOk;
  }
  const std::vector<Chunk> chunks = renderer->render(doc);
  // The .npy files are written before stdout (a failure leaves nothing half-printed) but put in place only
  // after it has taken the whole output; until then DIR is as it was (render/npy.hpp).
  std::optional<SaveSignals> signals;  // before the files are staged, so no signal can strand them
  std::optional<NpySave> npy;
  if (!o.save_npy.empty()) {
    signals.emplace();
    npy.emplace(doc, o.save_npy);
    if (signals->caught()) {  // stopped while the files were written: nothing is saved or printed
      npy.reset();
      signals->end(0);
      return kExitRuntime;  // (a signal the process ignores: nothing ends it, and the run stops here)
    }
  }
  emit(chunks, pause, out, in, Paint{style.color});
  if (npy) {
    out.flush();
    const int error = errno;
    signals->block();  // from here the moves, and undoing them if one fails, are not cut short
    if (!out || signals->caught()) {  // stdout failed, or the run was stopped: nothing is saved
      npy.reset();
      signals->end(error);  // a closed pipe, Ctrl-C, SIGTERM: the process ends as that signal would have ended it
      errno = error;
      return kExitRuntime;  // a full disk: main reports the write error
    }
    try {
      npy->commit();
    } catch (...) {  // reported before a signal held back meanwhile can end the process
      const int status = report_failure(err, doc.command);
      signals.reset();
      return status;
    }
  }
  return kExitOk;
}

// `attn list`: the lessons in book order.
std::string lesson_table(const Paint& paint) {
  std::string out = paint.bold("The lessons of chapter 3 and its bonus material, in book order") + "\n\n";
  // Columns as wide as the widest name and section ("ch04/03_kv-cache").
  std::size_t name_width = 0, section_width = 0;
  for (const Lesson& lesson : lessons()) {
    name_width = std::max(name_width, lesson.info.name.size());
    section_width = std::max(section_width, lesson.info.section.size());
  }
  const std::string indent(4 + name_width + 1 + section_width + 1, ' ');
  std::size_t k = 0;
  for (const Lesson& lesson : lessons()) {
    const LessonInfo& info = lesson.info;
    char number[16];
    std::snprintf(number, sizeof number, "%2zu  ", ++k);
    out += number + info.name + std::string(name_width + 1 - info.name.size(), ' ') + info.section +
           std::string(section_width + 1 - info.section.size(), ' ') + info.title + "\n";
    out += indent + info.summary + "\n";
    out += indent + paint.cyan("attn " + info.name) + "\n";
  }
  out += "\nattn tour runs them all; attn LESSON --help lists a lesson's options.\n";
  return out;
}

nlohmann::ordered_json lesson_list_json() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Lesson& lesson : lessons()) {
    const LessonInfo& info = lesson.info;
    list.push_back({{"name", info.name},
                    {"section", info.section},
                    {"title", info.title},
                    {"summary", info.summary},
                    {"command", "attn " + info.name}});
  }
  return list;
}

int run_list(const CommandLine& parsed, std::ostream& out, const Terminal& term) {
  const Paint paint{resolve_style(When::Auto, When::Never, true, false, term).color};
  out << (parsed.list.json ? dump_json(lesson_list_json()) : lesson_table(paint));
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

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::istringstream no_input;
  return run_cli(args, out, err, no_input, Terminal{});
}

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::istream& in,
            const Terminal& term) {
  std::string command;
  try {
    CommandLine parsed;  // what CLI11 stores; only the options given are read from it
    Cli cli;
    setup(cli, parsed);

    // CLI11 reads argv in the C form.
    std::vector<const char*> argv{"attn"};
    for (const auto& a : args) argv.push_back(a.c_str());
    try {
      cli.app.parse(static_cast<int>(argv.size()), argv.data());
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
    const Sub* chosen = cli.tour.app->parsed() ? &cli.tour : cli.present.app->parsed() ? &cli.present : nullptr;
    for (const Sub& sub : cli.lessons)
      if (sub.app->parsed()) chosen = &sub;
    if (chosen == nullptr) {  // plain `attn`: show what there is to learn
      out << cli.app.help();
      return kExitOk;
    }
    command = chosen->app->get_name();
    return run_lessons(*chosen, parsed, out, err, in, term);
  } catch (...) {
    return report_failure(err, command);
  }
}

}  // namespace attn
