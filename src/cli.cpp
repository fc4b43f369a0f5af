#include "cli.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench/bench.hpp"
#include "io/embeddings.hpp"
#include "lessons/lessons.hpp"
#include "render/json.hpp"
#include "render/text.hpp"

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
    "  attn tour --pause              all eight lessons, one step per Enter (for class)\n"
    "  attn trainable --seed 123      exercise 3.1's weights\n"
    "  attn gqa --kv-cache            how much KV-cache memory grouped-query attention saves\n"
    "  attn all-tokens --json | jq '.steps[] | select(.id == \"attn_weights\") | .data'\n"
    "\n"
    "Run 'attn LESSON --help' for a lesson's options. JSON schema: docs/json.md.";

// CLI11's messages are one line; name the way to help.
std::string usage_hint(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return " (see 'attn " + sub->get_name() + " --help')";
  return " (see 'attn --help')";
}

// One piece of output; --pause waits after the pieces that end a step.
struct Chunk {
  std::string text;
  bool pause_after = false;
};

// "computing mha... 2.4 s" on stderr while a lesson takes longer than a second, erased when it ends.
// Only on a terminal: never in a pipe or a log, never on stdout.
class Progress {
 public:
  Progress(bool enabled, std::string what) {
    if (!enabled) return;
    worker_ = std::thread([this, what = std::move(what)] {
      const auto start = std::chrono::steady_clock::now();
      std::unique_lock<std::mutex> lock(mutex_);
      if (done_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) return;
      while (!done_) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::fprintf(stderr, "\rattn: computing %s... %.1f s", what.c_str(), s);
        std::fflush(stderr);
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
    if (shown_) std::fprintf(stderr, "\r\x1b[K");
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  bool shown_ = false;
};

void check_json_size(const std::vector<Trace>& traces) {
  std::size_t numbers = 0;
  for (const auto& t : traces)
    for (const auto& s : t.steps) numbers += s.tensor.size();
  if (numbers > kMaxJsonNumbers)
    throw UsageError("--json would write " + with_commas(numbers) + " numbers, more than the limit of " +
                     with_commas(kMaxJsonNumbers) + "; the text view summarises large tensors");
}

std::vector<Chunk> text_chunks(const Trace& trace, const TextStyle& style) {
  std::vector<Chunk> chunks;
  const auto pieces = render_text_chunks(trace, style);
  for (std::size_t i = 0; i < pieces.size(); ++i) chunks.push_back({pieces[i], i > 0});
  return chunks;
}

// `attn list`: the lessons in book order.
std::string lesson_table(const LessonRegistry& registry, const Paint& paint) {
  std::string out = paint.bold("The lessons of chapter 3, in book order") + "\n\n";
  std::size_t k = 0;
  for (const auto& e : registry.entries()) {
    char head[128];
    std::snprintf(head, sizeof head, "%2zu  %-12s %-12s ", ++k, e.info.name.c_str(), e.info.section.c_str());
    out += head + e.info.title + "\n";
    out += std::string(30, ' ') + e.info.summary + "\n";
    out += std::string(30, ' ') + paint.cyan("attn " + e.info.name) + "\n";
  }
  out += "\nattn tour runs them all; attn LESSON --help lists a lesson's options.\n";
  return out;
}

nlohmann::ordered_json lesson_list_json(const LessonRegistry& registry) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& e : registry.entries())
    list.push_back({{"name", e.info.name},
                    {"section", e.info.section},
                    {"title", e.info.title},
                    {"summary", e.info.summary},
                    {"command", "attn " + e.info.name}});
  return list;
}

// Writes the chunks; with pause, waits for Enter after each step and stops on q or end of input.
void emit(const std::vector<Chunk>& chunks, bool pause, std::ostream& out, std::istream& in, const Paint& paint) {
  // pause is only ever set when stdin and stdout are terminals.
  if (!pause) {
    std::string all;
    for (const auto& c : chunks) all += c.text;
    out << all;
    return;
  }
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    out << chunks[i].text << std::flush;
    if (!chunks[i].pause_after || i + 1 == chunks.size()) continue;
    out << paint.dim("-- Enter: next step, q: quit --") << std::flush;
    std::string line;
    if (!std::getline(in, line) || line == "q" || line == "Q") {
      out << "\n" << std::flush;
      return;
    }
    out << "\x1b[1A\x1b[2K" << std::flush;  // a terminal: take the prompt line away again
  }
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::istringstream no_input;
  return run_cli(args, out, err, no_input, Terminal{});
}

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, std::istream& in,
            const Terminal& term) {
  CLI::App app{kDescription, "attn"};
  app.set_version_flag("--version", "attn " ATTN_VERSION, "Print the version and exit");
  app.require_subcommand(0, 1);
  app.footer(kFooter);
  LessonRegistry registry(app);
  register_all_lessons(registry);

  CLI::App* list = app.add_subcommand("list", "The lessons in book order: section, what each shows, how to run it");
  bool list_json = false;
  list->add_flag("--json", list_json, "Print the list as JSON");
  CLI::App* tour = app.add_subcommand("tour", "All eight lessons in book order, each with its book defaults");
  CLI::App* bench = app.add_subcommand(
      "bench", "Time the chapter's multi-head attention implementations (wrapper, mha, fused, gqa) at GPT-2 size");
  BenchOptions bench_options;
  bool bench_json_out = false;
  bench->add_option("--batch", bench_options.batch, "Batch size")->capture_default_str()->check(whole_number(1, kMaxBatch));
  bench->add_option("--tokens", bench_options.tokens, "Tokens per sequence")
      ->capture_default_str()
      ->check(whole_number(1, kMaxTokens));
  bench->add_option("--dim", bench_options.dim, "Embedding size d_in = d_out")
      ->capture_default_str()
      ->check(whole_number(1, kMaxDims));
  bench->add_option("--heads", bench_options.heads, "Attention heads")->capture_default_str()->check(whole_number(1, kMaxHeads));
  bench->add_option("--kv-groups", bench_options.kv_groups, "Key/value heads of the gqa implementation")
      ->capture_default_str()
      ->check(whole_number(1, kMaxHeads));
  bench->add_option("--repeats", bench_options.repeats, "Timed runs per implementation, after one warm-up")
      ->capture_default_str()
      ->check(whole_number(1, 100));
  bench->add_option("--impl", bench_options.impls, "Implementations to run (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"wrapper", "mha", "fused", "gqa"}))
      ->type_name("NAME,...");
  bench->add_flag("--json", bench_json_out, "Print the results as one JSON document");
  bench->footer(
      "All four compute the same function on the same weights (max|diff| is each one's distance from mha):\n"
      "  wrapper  section 3.6.1: a CausalAttention per head, their outputs concatenated\n"
      "  mha      section 3.6.2: one projection per Q/K/V, heads as views, the full (b, h, T, T) scores\n"
      "  fused    mha's weights on a tiled kernel with an online softmax: no (T, T) matrix, no work above\n"
      "           the diagonal, both cores\n"
      "  gqa      grouped-query attention: --kv-groups key/value heads shared by the query heads, fused\n"
      "Timing: a warm-up, then the median of --repeats runs. GFLOP/s counts useful work only (the projections\n"
      "and the causal half of the scores, not the masked half); %SGEMM compares it with this machine's own\n"
      "matrix-product rate. The default shape is GPT-2 small's and takes about 20 s on two cores.\n"
      "Example: attn bench --tokens 256 --repeats 3. Figures: docs/performance.md.");
  CommonOptions tour_options;
  add_common_options(tour, tour_options);

  // CLI11 reads argv in the C form.
  std::vector<const char*> argv{"attn"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr) {
      out << "attn " ATTN_VERSION "\n";
      return kExitOk;
    }
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e, out, err);  // --help
    err << "attn: " << e.what() << usage_hint(app) << "\n";
    return kExitUsage;
  }

  if (list->parsed()) {
    const Paint paint{resolve_style(When::Auto, When::Never, true, false, term).color};
    out << (list_json ? dump_json(lesson_list_json(registry)) : lesson_table(registry, paint));
    return kExitOk;
  }
  if (bench->parsed()) {
    try {
      const BenchOptions& o = bench_options;
      if (o.dim % o.heads != 0)
        throw UsageError("--dim " + std::to_string(o.dim) + " is not divisible by --heads " + std::to_string(o.heads));
      if (o.heads % o.kv_groups != 0)
        throw UsageError("--heads " + std::to_string(o.heads) + " is not divisible by --kv-groups " +
                         std::to_string(o.kv_groups));
      check_elements("mha's (batch, heads, tokens, tokens) scores", {o.batch, o.heads, o.tokens, o.tokens});
      const bool show_progress = term.stderr_tty;  // a line per finished implementation, never in a pipe
      const BenchReport report = run_bench(o, [show_progress](const std::string& impl) {
        if (show_progress) std::fprintf(stderr, "attn: bench: %s done\n", impl.c_str());
      });
      out << (bench_json_out ? dump_json(bench_json(report)) : render_bench_text(report));
      return kExitOk;
    } catch (const UsageError& e) {
      err << "attn: " << e.what() << " (see 'attn bench --help')\n";
      return kExitUsage;
    }
  }

  const LessonRegistry::Entry* chosen = nullptr;
  for (const auto& entry : registry.entries())
    if (entry.command->parsed()) chosen = &entry;
  if (chosen == nullptr && !tour->parsed()) {  // plain `attn`: show what there is to learn
    out << app.help();
    return kExitOk;
  }

  const std::string command = tour->parsed() ? "tour" : chosen->info.name;
  const CommonOptions& common = tour->parsed() ? tour_options : registry.common();
  try {
    const TextStyle style =
        resolve_style(parse_when(common.color), parse_when(common.heatmap), common.explain, common.quiet, term);
    const Paint paint{style.color && !common.json};
    const Inputs inputs = load_inputs(common);
    std::vector<Trace> traces;
    {
      const Progress progress(term.stderr_tty, command);
      if (chosen != nullptr) {
        traces.push_back(chosen->run(inputs));
      } else {
        for (const auto& entry : registry.entries()) traces.push_back(entry.run(inputs));
      }
    }

    std::vector<Chunk> chunks;
    if (common.json) {
      check_json_size(traces);
      if (chosen != nullptr) {
        chunks.push_back({render_json(traces.front())});
      } else {
        nlohmann::ordered_json doc;
        doc["schema_version"] = kJsonSchemaVersion;
        doc["lesson"] = "tour";
        doc["lessons"] = nlohmann::ordered_json::array();
        for (const auto& t : traces) doc["lessons"].push_back(trace_to_json(t));
        chunks.push_back({dump_json(doc)});
      }
    } else if (chosen != nullptr) {
      chunks = text_chunks(traces.front(), style);
    } else {
      for (std::size_t k = 0; k < traces.size(); ++k) {
        const Trace& t = traces[k];
        const std::string rule(78, '=');
        chunks.push_back({(k ? "\n" : "") + paint.bold(rule) + "\n" +
                          paint.bold("Lesson " + std::to_string(k + 1) + " of " + std::to_string(traces.size()) +
                                     ": attn " + t.info.name + " -- " + t.info.section + " " + t.info.title) +
                          "\n" + paint.bold(rule) + "\n"});
        for (auto& c : text_chunks(t, style)) chunks.push_back(std::move(c));
      }
    }
    const bool pause = common.pause && !common.json && term.stdin_tty && term.stdout_tty;
    emit(chunks, pause, out, in, paint);
    return kExitOk;
  } catch (const UsageError& e) {
    err << "attn: " << e.what() << " (see 'attn " << command << " --help')\n";
    return kExitUsage;
  } catch (const InputError& e) {
    err << "attn: " << e.what() << "\n";
    return kExitRuntime;
  } catch (const std::bad_alloc&) {
    err << "attn: out of memory\n";
    return kExitRuntime;
  } catch (const std::exception& e) {
    err << "attn: internal error: " << e.what() << "\n";
    return kExitRuntime;
  }
}

}  // namespace attn
