#include "cli.hpp"

#include <CLI/CLI.hpp>

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
    "  attn simple                    one query, step by step (start here)\n"
    "  attn simple --query 3          the same for the token \"with\"\n"
    "  attn trainable --seed 123      exercise 3.1's weights\n"
    "  attn all-tokens --json | jq '.steps[] | select(.id == \"attn_weights\") | .data'\n"
    "\n"
    "Run 'attn LESSON --help' for a lesson's options. JSON schema: docs/json.md.";

// CLI11's messages are one line; name the way to help.
std::string usage_hint(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    return " (see 'attn " + sub->get_name() + " --help')";
  return " (see 'attn --help')";
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{kDescription, "attn"};
  app.set_version_flag("--version", "attn " ATTN_VERSION, "Print the version and exit");
  app.require_subcommand(0, 1);
  app.footer(kFooter);
  LessonRegistry registry(app);
  register_all_lessons(registry);

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

  const LessonRegistry::Entry* chosen = nullptr;
  for (const auto& entry : registry.entries())
    if (entry.command->parsed()) chosen = &entry;
  if (chosen == nullptr) {  // plain `attn`: show what there is to learn
    out << app.help();
    return kExitOk;
  }

  try {
    const CommonOptions& common = registry.common();
    const Inputs inputs = load_inputs(common);
    const Trace trace = chosen->run(inputs);
    if (common.json) {
      std::size_t numbers = 0;
      for (const auto& s : trace.steps) numbers += s.tensor.size();
      if (numbers > kMaxJsonNumbers)
        throw UsageError("--json would write " + with_commas(numbers) + " numbers, more than the limit of " +
                         with_commas(kMaxJsonNumbers) + "; the text view summarises large tensors");
    }
    out << (common.json ? render_json(trace) : render_text(trace));
    return kExitOk;
  } catch (const UsageError& e) {
    err << "attn: " << e.what() << " (see 'attn " << chosen->info.name << " --help')\n";
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
