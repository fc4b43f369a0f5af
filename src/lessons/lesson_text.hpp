#pragma once
// A lesson's words at work (docs/architecture.md, "Lesson text"): its content file, then the shared one,
// read in the trace's language, with the values the lesson gives its placeholders, filling in each step it
// adds: t.add("attn_scores_2", ...) with words written in C++ becomes text.add("attn_scores_2", {n}, value),
// whose title, explanation and code come from data/lessons/<lesson>.json.
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "text/content.hpp"
#include "text/words.hpp"
#include "trace/trace.hpp"

namespace attn {

// Which variant of a piece: its path ("queries_{at}") and the variant's name ("token"), or none.
struct TextKey {
  TextKey(const char* p) : pattern(p) {}  // NOLINT: a plain key reads as a string
  TextKey(std::string p) : pattern(std::move(p)) {}  // NOLINT
  TextKey(std::string p, std::string v) : pattern(std::move(p)), variant(std::move(v)) {}
  std::string pattern, variant;
};

// A lesson's text at work: its content (then the shared content), the values it has given so far, and the
// trace its steps go to. `add` takes a step's words from the content and its shape and value from the
// lesson: t.add("attn_scores_2", {n}, attn_scores_2) becomes text.add("attn_scores_2", {n}, attn_scores_2).
class LessonText {
 public:
  // Also gives the trace its lesson's title and summary in the trace's language.
  LessonText(Trace& t, const std::string& lesson);

  // Gives a placeholder its value (numbers as decimal digits).
  LessonText& set(const std::string& name, std::string value) {
    values_[name] = std::move(value);
    return *this;
  }
  LessonText& set(const std::string& name, const char* value) { return set(name, std::string(value)); }
  template <class N, class = std::enable_if_t<std::is_integral_v<N>>>
  LessonText& set(const std::string& name, N value) {
    return set(name, std::to_string(value));
  }
  // A number as the text's language writes it in a sentence (grouped_number).
  std::string number(unsigned long long n) const { return t_->words.number(n); }
  // A copy with more values, for one step or one helper.
  LessonText with(const TextValues& more) const {
    LessonText copy = *this;
    for (const auto& [k, v] : more) copy.values_[k] = v;
    return copy;
  }

  // A phrase ("phrases/<name>"), filled in.
  std::string phrase(const TextKey& key) const;
  // The lesson's title and summary (its LessonInfo).
  static LessonInfo info(const std::string& lesson, const std::string& section, const Words& words = {});

  struct StepWords {
    std::string id, title, explanation, code;
    std::optional<std::string> run;  // the notebook's cell (Step::run), when the content gives one
    std::string show;
  };
  StepWords step(const TextKey& key) const;

  // Trace::add's three forms, with the id, title, explanation and code (and the notebook's run and show)
  // from the content.
  template <class E>
  Step& add(const TextKey& key, const E& tensor) const {
    StepWords w = step(key);
    return notebook(w, t_->add(w.id, w.title, w.explanation, w.code, tensor));
  }
  template <class F, class... A>
  Step& add(const TextKey& key, std::vector<std::size_t> shape, F f, A... inputs) const {
    StepWords w = step(key);
    return notebook(w, t_->add(w.id, w.title, w.explanation, w.code, std::move(shape), std::move(f),
                               std::move(inputs)...));
  }
  template <class T>
  Step& add(const TextKey& key, std::vector<std::size_t> shape, Node<T> value) const {
    StepWords w = step(key);
    return notebook(w, t_->add(w.id, w.title, w.explanation, w.code, std::move(shape), value));
  }
  // Puts `code` before the notebook's run of the step `id`, added already (Step::run): where the cells
  // build a module the lesson built before its steps (the run of its first parameter's step).
  void run_first(const std::string& id, const std::string& code) const;

  Trace& trace() const { return *t_; }
  const TextValues& values() const { return values_; }

 private:
  // The step's notebook form from the content, and the lesson's notebook setup (Trace::notebook_setup), the
  // phrase "notebook_setup" if it has one, filled with the values given so far.
  Step& notebook(StepWords& w, Step& s) const;
  // The content holding `path` (the lesson's, else the shared one), and the piece filled in.
  std::string text(const std::string& path, const std::string& variant) const;

  Trace* t_;
  const Content* own_;
  const Content* shared_;
  TextValues values_;
};

}  // namespace attn
