#pragma once
// The lessons, in book order, as data: what each is called, which options each mode takes with which
// defaults, and the function that computes it. The command line, `attn list`, `attn tour`, the man page,
// the bash completion and the tests all ask this registry; nothing else lists or counts the lessons.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lessons/config.hpp"
#include "trace/trace.hpp"

namespace attn {

// An option a mode takes, with the help text it has there (empty: the option table's general help).
struct OptionUse {
  Opt opt;
  std::string help;
  // The default in words, where the mode's default is no value of the option (kv-cache's --kv-groups:
  // "none", its LessonConfig holding 0); --help, the man page and the README show it instead of the value.
  std::string default_note = {};
};

// One way to run a lesson. The first mode of a lesson is the lesson itself; another mode is chosen by
// its `selector` flag (gqa's --kv-cache). An option the chosen mode does not list is a usage error.
struct LessonMode {
  // Computes the steps `selection` shows and what they need (every step with an empty selection); a
  // function returning a Trace it has not resolved is not a Run.
  using Run = std::function<ResolvedTrace(const Inputs&, const LessonConfig&, const Selection&)>;
  LessonMode(std::vector<OptionUse> options_, LessonConfig defaults_, Run run_, bool uses_inputs_ = true,
             std::optional<Opt> selector_ = std::nullopt)
      : options(std::move(options_)), defaults(defaults_), run(std::move(run_)), uses_inputs(uses_inputs_),
        selector(selector_) {}

  std::vector<OptionUse> options;  // in the order --help shows them
  LessonConfig defaults;           // the book's values for this mode
  Run run;
  bool uses_inputs = true;         // false: --input/--random are refused and "input" is not in the config
  // Whether it runs on a pretrained model's layer (--model); when not, why not, for the usage error. The tour
  // leaves such a lesson out under --model.
  bool takes_model = true;
  std::string no_model_reason;
  std::optional<Opt> selector;     // the flag that picks this mode; none for the first mode

  bool takes(Opt o) const;
};

// Runs of a lesson that reach its largest allocations, declared in the lesson's own file so that the
// memory tests (tests/test_memory.cpp) cover every lesson of the registry with no list of their own. Each
// run is the arguments after the lesson's name.
struct MemoryRuns {
  // Runs whose measured peak the lesson's memory estimate must bound (and not exceed four times over).
  std::vector<std::vector<std::string>> measured;
  // The options with which the lesson's largest --random Nx16 input under a budget runs within it; for a
  // lesson that takes no input (chapter 4's), its largest run under that budget (tests/test_memory.cpp: 384 MiB).
  std::vector<std::string> at_budget;
};

struct Lesson {
  LessonInfo info;
  std::vector<LessonMode> modes;  // modes[0]: the lesson as the book runs it
  MemoryRuns memory;

  // Each option any mode takes, once, with the first mode that lists it (whose help and default it shows).
  struct Use {
    const LessonMode* mode;
    const OptionUse* use;
  };
  std::vector<Use> option_uses() const;
  bool takes(Opt o) const;  // in any mode
};

// Every lesson, in book order (lessons/registry.cpp: one line each).
const std::vector<Lesson>& lessons();
// The same entries made anew (lessons() makes them once): for a test that counts what they read.
std::vector<Lesson> make_lessons();
// The lesson called `name`, or nullptr.
const Lesson* find_lesson(const std::string& name);
// The book's configuration of a lesson's first mode (what `attn NAME` runs with no options).
LessonConfig book_config(const std::string& name);

}  // namespace attn
