#include "run/run.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/errors.hpp"
#include "core/heap_budget.hpp"
#include "lessons/registry.hpp"
#include "run/npy.hpp"

namespace attn {

namespace {

// Runs one lesson and completes its config: the inputs' (when the mode reads inputs), the mode's options,
// then what the lesson recorded itself (a resolved value replaces its option's entry in place).
Trace run_lesson(const LessonRun& lesson, const Inputs& in, const InputOptions& input, const Selection& selection) {
  Trace t = lesson.mode->run(in, lesson.config, selection);  // a ResolvedTrace: only resolve() makes one
  nlohmann::ordered_json config = lesson.mode->uses_inputs ? inputs_config(input, in) : nlohmann::ordered_json::object();
  for (const auto& [key, value] : lesson.options.items()) config[key] = value;
  for (const auto& [key, value] : t.config.items()) config[key] = value;
  t.config = std::move(config);
  return t;
}

// "computing mha... 2.4 s" on `err` while a run takes longer than a second, erased when it ends.
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

// The memory budget (--max-memory), checked on a lesson's plan before any of it is computed: the process's
// base, what the sections before it keep (the tour's), the plan's own peak, and the renderer's working
// memory. `planned` is the run's document with `plan`'s section as its last.
std::size_t memory_needed(const Document& planned, const Trace& plan, const Renderer& renderer, bool save_npy) {
  std::size_t need = saturating_sum(kBaseBytes, plan.planned_bytes());
  need = saturating_sum(need, plan.inputs.held_bytes);  // --model: the weights, the tokenizer
  for (std::size_t i = 0; i + 1 < planned.sections.size(); ++i) need = saturating_sum(need, planned.sections[i].shown_bytes());
  need = saturating_sum(need, renderer.working_bytes(planned));
  return save_npy ? saturating_sum(need, npy_working_bytes(planned)) : need;
}

}  // namespace

// A lesson's own usage error (--d-out 2 is not divisible by --heads 4), in a run of several lessons, names the
// lesson: the options given apply to each lesson that takes them, and only one of them may refuse.
template <class F>
auto naming(const Request& request, const LessonRun& lesson, F f) {
  try {
    return f();
  } catch (const UsageError& e) {
    if (request.lessons.size() < 2 || std::string(e.what()).rfind("attn ", 0) == 0) throw;  // named already
    throw UsageError("attn " + lesson.lesson->info.name + ": " + e.what());
  }
}

// With Request::steps_where_found, the lessons that have any of --step's ids, each with those it has: the
// lessons are planned (nothing computed) to learn their step ids. An id no lesson has is a usage error.
struct Shown {
  const LessonRun* lesson;
  std::vector<std::string> only;
};
std::vector<Shown> shown_lessons(const Request& request, const Inputs& inputs) {
  const std::vector<std::string>& steps = request.output.steps;
  std::vector<Shown> out;
  if (!request.steps_where_found || steps.empty() || request.lessons.size() == 1) {
    for (const LessonRun& lesson : request.lessons) out.push_back({&lesson, steps});
    return out;
  }
  std::vector<bool> found(steps.size(), false);
  for (const LessonRun& lesson : request.lessons) {
    const Trace plan = naming(request, lesson, [&] {
      return lesson.mode->run(inputs, lesson.config, Selection{{}, nullptr, true, request.words});
    });
    Shown s{&lesson, {}};
    for (std::size_t i = 0; i < steps.size(); ++i)
      if (plan.has_step(steps[i])) {
        s.only.push_back(steps[i]);
        found[i] = true;
      }
    if (!s.only.empty()) out.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (!found[i]) {
      std::string names;
      for (const LessonRun& lesson : request.lessons) names += (names.empty() ? "" : ", ") + lesson.lesson->info.name;
      throw UsageError("--step " + steps[i] + ": none of the lessons presented (" + names + ") has such a step; attn " +
                       "LESSON --json | jq '.steps[].id' lists a lesson's steps");
    }
  return out;
}

// The run, with `planning` armed until its plans pass their check; `phase` says what it is doing, for the
// refusal when the heap reaches the budget.
static Document run_within(const Request& request, const Renderer& renderer, const RunStreams& streams,
                           HeapBudget& planning, const char*& phase) {
  const OutputOptions& o = request.output;
  const Inputs inputs = load_inputs(request.input, streams.in, [&](std::size_t need) {
    check_part(request.command, need, o.max_memory, "for its inputs");
  }, request.words);
  phase = "planning its steps";
  if (!o.save_npy.empty()) prepare_npy_dir(o.save_npy);  // checked before the work; nothing is created yet
  const std::vector<Shown> shown = shown_lessons(request, inputs);

  Document doc;
  doc.command = request.command;
  doc.words = request.words;
  doc.only = o.steps;
  // Every lesson is planned first, alone (plan_only: no step computed, no shown tensor copied), and the
  // renderer's limits and the memory budget are checked on the plans, as one run (each plan with the
  // plans before it, as the tour will hold them), before any lesson computes anything. Each lesson checks
  // its plan again as it runs (with the sections run before it).
  // The plan joins the document (not a copy of it: that would copy every tensor the tour holds) while
  // it is checked.
  const auto checks = [&](Document& before, bool whole_run) {
    return [&, planned = &before, whole_run](const Trace& plan) {
      planned->sections.push_back(plan);
      try {
        renderer.check(*planned);
        const std::size_t need = memory_needed(*planned, plan, renderer, !o.save_npy.empty());
        if (!whole_run) check_budget(plan.info.name, need, o.max_memory);
        else if (planned->sections.size() == shown.size()) check_budget(doc.command, need, o.max_memory);  // the last
        else check_part(doc.command, need, o.max_memory, "its lessons planned as far as " + plan.info.name);
      } catch (...) {
        planned->sections.pop_back();
        throw;
      }
      planned->sections.pop_back();
    };
  };
  {
    Document plans;
    plans.command = doc.command;
    plans.only = doc.only;
    for (const Shown& s : shown) {
      const Selection plan_only{s.only, checks(plans, true), true, request.words};
      plans.sections.push_back(naming(request, *s.lesson, [&] { return run_lesson(*s.lesson, inputs, request.input, plan_only); }));
    }
  }
  planning.disarm();  // the plans' estimate bounds the rest of the run
  const Progress progress(streams.progress, doc.command, streams.err);
  for (const Shown& s : shown) {
    const Selection selection{s.only, checks(doc, false), false, request.words};
    doc.sections.push_back(run_lesson(*s.lesson, inputs, request.input, selection));
  }
  return doc;
}

Document run(const Request& request, const Renderer& renderer, const RunStreams& streams) {
  const OutputOptions& o = request.output;
  // Every run needs the process's base; a budget below it is refused before anything is read.
  check_part(request.command, kBaseBytes, o.max_memory, "the process itself");
  // Until the plan has passed its check, the heap may grow by the budget less that base: reading the inputs
  // and planning (drawing a module's weights, copying the inputs) stop where they would pass it.
  HeapBudget planning(o.max_memory - kBaseBytes);
  const char* phase = "reading its inputs";
  try {
    return run_within(request, renderer, streams, planning, phase);
  } catch (const HeapBudget::Exceeded& e) {
    // No estimate is known then, only what the run had come to need, and where.
    throw part_refusal(request.command, saturating_sum(kBaseBytes, e.needed), o.max_memory,
                       std::string("the budget was reached while ") + phase);
  }
}

}  // namespace attn
