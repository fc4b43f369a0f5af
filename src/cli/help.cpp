// attn's help: the texts around CLI11's lists, and the formatter that wraps them to 80 columns.
#include "cli/help.hpp"

#include <algorithm>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/bench_options.hpp"
#include "core/strings.hpp"

namespace attn {

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
    "  attn serve                     live pages in a browser, recomputed as you type\n"
    "  attn trainable --seed 123      exercise 3.1: sa_v1 with sa_v2's weights\n"
    "  attn kv-cache                  decoding token by token: the KV cache growing\n"
    "  attn kv-cache --estimate       KV-cache memory: multi-head vs grouped-query\n"
    "  attn all-tokens --json | jq -c '.steps[] | select(.id == \"attn_weights\").data'\n"
    "\n"
    "Run 'attn LESSON --help' for a lesson's options. JSON schema: docs/json.md.";

const char* const kServeFooter =
    "It answers, on this machine only unless --host names another address:\n"
    "  /                      the live page: pick a lesson, type a sentence, change\n"
    "                         the seed or the heads; it recomputes as you type, and\n"
    "                         the address keeps what you chose (/?lesson=mha&seed=5)\n"
    "  /page/LESSON?seed=5    the html page of attn LESSON --seed 5 --format html\n"
    "  /api/LESSON?d-out=6    what attn LESSON --d-out 6 --format json writes\n"
    "Options are the lesson's long names without dashes; a refused one is a 400 with\n"
    "{\"error\": ...} in the command line's words. Nothing reaches the network but\n"
    "the page's own requests to this server. Ctrl-C stops it.\n"
    "Example:\n"
    "  attn serve --port 0    then open the address it prints\n"
    "More: docs/serve.md.";

std::string bench_footer() {
  // The implementations from their list (cli/bench_options.hpp).
  return "All of them compute the same function on the same weights (max|diff| is each\n"
         "one's distance from mha):\n" +
         bench_impls_help(HelpWidth) +
         "Timing: a warm-up, then the median of --repeats runs and their range (min..max).\n"
         "A row is called faster than another only when the two ranges do not overlap;\n"
         "a range wider than 10% of its median gets a warning on stderr (a busy machine).\n"
         "GFLOP/s counts useful work only (the projections and the causal half of the\n"
         "scores, not the masked half); %peak compares it with this machine's measured FMA\n"
         "peak, %SGEMM with its matrix-product rate. The default shape is GPT-2 small's\n"
         "and takes about 15 s on two quiet cores.\n"
         "--decode times generation instead: one new token attending to a KV cache of each\n"
         "--cache length, MHA and GQA, in microseconds per token and in GB/s against a\n"
         "copy of memory measured in the same run (about 5 s).\n"
         "A quick look, about a second on two quiet cores (longer on a busy machine):\n"
         "  attn bench --quick --tokens 256 --repeats 3\n"
         "  attn bench --decode --quick --cache 1024 --repeats 3\n"
         "Figures: docs/performance.md.";
}

std::string bench_description() {
  std::string names;
  for (const auto& name : bench_impls()) names += (names.empty() ? "" : ", ") + name;
  return "Time the chapter's multi-head attention implementations (" + names + ") at GPT-2 size";
}

const char* const kPresentFooter =
    "Keys (presenter clickers send these too):\n"
    "  -> Space PageDown Enter   next step      <- PageUp Backspace  previous\n"
    "  Home End                  first, last    [ ]                  lessons\n"
    "  g 12 Enter                step [12/n]    Up Down              scroll a step\n"
    "  g 0 Enter                 the intro      (each lesson's step 0)\n"
    "  n                         every number   s                 colour scale\n"
    "  t                         the printed tensor above the heatmap (again: below)\n"
    "  + -                       one head alone, enlarged, every number (past the\n"
    "                            last or first: every head side by side again)\n"
    "  Tab Shift-Tab             select a head of a grid of heads; Enter opens it\n"
    "  b .                       blank screen   ?                    help\n"
    "  q Ctrl-C                  quit (the terminal is restored)\n"
    "  Esc                       an open head back to its grid; else quit\n"
    "Colour follows --color, NO_COLOR and TERM; without it the presenter is\n"
    "monochrome, highlights in reverse video. The lesson options apply to the\n"
    "lessons that take them, --step to those that have the step. Examples: attn\n"
    "present; attn present causal mha --reveal; attn present --theme light --text\n"
    "\"The cat sat\"; attn present causal --seed 7 --step attn_weights.\n"
    "Guide: docs/classroom.md.";

// CLI11's help, wrapped to 80 columns, without the options only accepted to be refused, and a negatable
// flag named as "--explain, --no-explain" rather than CLI11's "--explain,--no-explain{false}".
namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  static constexpr std::size_t kWidth = HelpWidth;

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
  // CLI11's Formatter::make_help (attn has no nameless subcommands and no --help-all) with the option groups
  // made below, so that the kRefusedGroup is left out (CLI11's make_groups is not virtual).
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    return make_description(app) + make_usage(app, std::move(name)) + make_positionals(app) + option_groups(app, mode) +
           make_subcommands(app, mode) + "\n" + make_footer(app);
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
  // CLI11's groups of options in order, each after a blank line, leaving out the kRefusedGroup.
  std::string option_groups(const CLI::App* app, CLI::AppFormatMode mode) const {
    std::string out;
    for (const std::string& group : app->get_groups()) {
      if (group.empty() || group == kRefusedGroup) continue;
      const auto options = app->get_options([&](const CLI::Option* opt) {
        return opt->get_group() == group && opt->nonpositional() &&
               (mode != CLI::AppFormatMode::Sub || (opt != app->get_help_ptr() && opt != app->get_help_all_ptr()));
      });
      if (!options.empty()) out += (out.empty() ? "" : "\n") + make_group(group, false, options);
    }
    return out;
  }
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

}  // namespace

std::shared_ptr<CLI::Formatter> make_help_formatter() { return std::make_shared<HelpFormatter>(); }

}  // namespace attn
