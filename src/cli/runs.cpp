#include "cli/runs.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "text/language.hpp"

namespace attn {

namespace {

std::vector<std::string> lesson_names() {
  std::vector<std::string> names;
  for (const Lesson& lesson : lessons()) names.push_back(lesson.info.name);
  return names;
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
  if (spec.scope == Scope::Input && !mode->uses_inputs) {
    if (!mode->selector)  // a lesson on the book's own example tensors (chapter 4's)
      throw UsageError("attn " + lesson + " does not take " + name +
                       ": it reads no embeddings, only the book's own example tensors");
    throw UsageError(name + " does not apply with " + selector_name(*mode) + ", which reads no embeddings");
  }
  if (spec.scope != Scope::Lesson || mode->takes(*spec.opt)) return;
  for (const LessonMode& other : sub.lesson->modes)
    if (&other != mode && other.takes(*spec.opt)) {
      if (other.selector) throw UsageError(name + " only applies with " + selector_name(other));
      throw UsageError(name + " does not apply with " + selector_name(*mode));
    }
  throw UsageError("attn " + lesson + " does not take " + name);
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

}  // namespace

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

}  // namespace attn
