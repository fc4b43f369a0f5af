#pragma once
// The lessons' words as content: each lesson's step titles, explanations and PyTorch code, its notes and
// its option help live in data/lessons/<lesson>.json (and what several lessons share, the batch, the
// parameters, in data/lessons/shared.json), not in the C++. The C++ keeps the ids, the shapes, the lazy
// computations and a small map of values (`who`, `n`, `d_out`, ...) that fill the text's named
// placeholders through {fmt}: "Attention scores of {who}".
//
// The format (docs/architecture.md, "Lesson text"):
//   {"lesson": {"title": TEXT, "summary": TEXT},
//    "steps": {"<step id>": {"title": TEXT, "explanation": TEXT, "code": CODE}, ...},
//    "phrases": {"<name>": TEXT, ...},
//    "english_only": ["phrases/help_d_out", ...]}
// TEXT is a string; CODE an array of lines (or a string). Either may instead be an object of variants,
// {"token": ..., "prompt": ...}, of which the lesson names one. A step id may hold placeholders too
// (`queries_{at}`): the key is the pattern, the values make the id. Placeholders are `{name}`, name of
// [a-z0-9_]; `{{` and `}}` are literal braces. A count's noun is a plural, `{n|token|tokens}`: one form per
// category of the language's PluralRule (checked when the content loads), `#` standing for the count.
//
// Translation: data/lessons/<language>/<lesson>.json holds
//   {"language": "ru", "entries": {"steps/attn_scores_2/title": {"source": HASH, "text": "..."}, ...}}
// one entry per piece of English text it translates, keyed by the piece's path (below), with `source`
// the hash of the English text it was translated from (text_hash). An entry missing falls back to the
// English one; an entry whose English has changed since is stale (stale_entries says which).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trace/trace.hpp"

namespace attn {

// FNV-1a, 64 bits, of the text's UTF-8 bytes, as 16 lowercase hex digits: what a translated entry
// records of the English it was translated from.
std::string text_hash(const std::string& text);

// The `{name}`s of a format string, in order (a plural's name too); throws std::invalid_argument on a
// malformed one (an unmatched brace, an empty or invalid name, a format spec, a plural with no form).
std::vector<std::string> placeholders(const std::string& format);

// A plural in a format string: `{n|token|tokens}` is the form of the word for the count `n` gives, chosen by
// the language's rule (PluralRule); `#` in a form is the count itself: `{h|the one head|all # heads}`.
struct Plural {
  std::string name;
  std::vector<std::string> forms;
};
std::vector<Plural> plurals(const std::string& format);

// A language's plural forms, CLDR's categories for whole numbers, in the order a plural lists its forms:
// English "one", "other" (1 token, 0 tokens, 2 tokens); Russian "one", "few", "many" (1, 21 токен; 2, 3, 4,
// 22 токена; 0, 5, 11, 12 токенов). `form` is the index of the form for a count.
struct PluralRule {
  std::vector<std::string> categories;
  std::size_t (*form)(unsigned long long n);
};
// The rule of `language` ("" and "en" are English); nullptr for a language that has none here yet.
const PluralRule* plural_rule(const std::string& language);

// The languages attn speaks (--lang's values): "en", and each language with a plural rule here and a
// translation of every content file in data/lessons/<language>/ (tests/test_translation.cpp checks both).
const std::vector<std::string>& supported_languages();

// The language the environment asks for, as gettext reads it: LANGUAGE's colon-separated list (the first
// language attn speaks; none of them: English), read only when the locale of messages (LC_ALL, else
// LC_MESSAGES, else LANG) is set and not C or POSIX; without LANGUAGE, that locale's language
// ("ru_RU.UTF-8" -> "ru"). "" for English, and for a
// language attn does not speak (quietly). `env` gives a variable's value ("" when unset).
std::string language_of_environment(const std::function<std::string(const char*)>& env);

// A whole number as the language writes it in a sentence: English groups thousands with commas (50,257);
// Russian, where a comma is the decimal sign, with a no-break space (U+00A0) from five digits on (4096,
// 50 257), as Russian typography does.
std::string grouped_number(unsigned long long n, const std::string& language);

// The values a lesson gives its text, by placeholder name.
using TextValues = std::map<std::string, std::string>;

// One lesson's content (or the shared one), parsed and checked, with a translation merged in.
class Content {
 public:
  // Parses `english` (the file's text; `path` names it in errors) and, when given, a translation. A
  // malformed file (not JSON, a piece that is neither text nor variants, a malformed placeholder) is
  // an InputError naming the file and the piece.
  Content(const std::string& path, const std::string& english, const std::string& translation_path = "",
          const std::string& translation = "");

  // A piece of text by path, "steps/<id pattern>/<field>" or "phrases/<name>" or "lesson/title", with
  // the variant when the piece has variants ("" when it has none): the translated text if there is one,
  // the English otherwise. Throws std::logic_error when the content has no such piece.
  const std::string& piece(const std::string& path, const std::string& variant) const;
  bool has(const std::string& path) const;
  // The step id patterns, in file order.
  const std::vector<std::string>& step_patterns() const { return step_patterns_; }
  // Every piece's full path ("steps/x/title", "steps/y/code/token"): the translatable units.
  std::vector<std::string> paths() const;
  const std::string& english(const std::string& full_path) const { return english_.at(full_path); }
  // Whether a piece is one a translation gives: not a step's code, run or show (PyTorch, the same in every
  // language), nor a piece under a path the file's "english_only" lists (option help and error messages, which
  // stay English; Python code among the phrases).
  bool translatable(const std::string& full_path) const;
  std::vector<std::string> translatable_paths() const;
  // The translation's text of a piece, when it has an entry whose English is unchanged since.
  std::optional<std::string> fresh_translation(const std::string& full_path) const;
  // The translation's entries whose English has changed since (or is gone): their full paths.
  std::vector<std::string> stale_entries() const;
  const std::string& path() const { return path_; }
  // The language of the text piece() gives for `path` and `variant`: the translation's, or "en".
  std::string language(const std::string& path, const std::string& variant) const;

  // Which pieces were filled in since the process started (the tests check every piece is used). Marked by
  // every run that fills text in, which attn serve runs on several threads at once: under a lock.
  std::set<std::string> used() const {
    const std::lock_guard<std::mutex> lock(used_mutex_);
    return used_;
  }
  void mark_used(const std::string& full_path) const {
    const std::lock_guard<std::mutex> lock(used_mutex_);
    used_.insert(full_path);
  }
  void forget_used() const {  // for a test that counts the uses of its own runs
    const std::lock_guard<std::mutex> lock(used_mutex_);
    used_.clear();
  }

 private:
  std::string path_, translation_path_, translation_language_;
  std::vector<std::string> step_patterns_;
  std::vector<std::string> english_only_;  // the "english_only" section: paths (or their prefixes) never translated
  std::map<std::string, std::string> english_;         // full path -> English text
  std::set<std::string> has_variants_;                 // paths (without the variant) that have variants
  std::map<std::string, std::pair<std::string, std::string>> translated_;  // full path -> (source hash, text)
  mutable std::set<std::string> used_;
  mutable std::mutex used_mutex_;
};

// The content of `name` ("simple", ..., "shared"): data/lessons/<name>.json, found as every bundled file is
// (io/paths.hpp), with `language`'s translation merged in when one is given (load_lesson_content); read
// once per process and language. An InputError when it is missing or malformed.
const Content& lesson_content(const std::string& name, const std::string& language = "");

// The content of `name` in `language` ("" for English alone): data/lessons/<name>.json with, when a language
// is given and data/lessons/<language>/<name>.json exists, that translation merged in, entry by entry
// (an entry it lacks stays English). Not cached (lesson_content caches it).
std::unique_ptr<Content> load_lesson_content(const std::string& name, const std::string& language);

// `format` with its placeholders filled from `values`, its plurals by `language`'s rule; `where` names the
// piece for errors. A placeholder the values lack, or a plural whose value is not a whole number, is a
// std::logic_error naming it (a lesson that does not give what its content uses).
std::string fill(const std::string& format, const TextValues& values, const std::string& where,
                 const std::string& language = "");

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
  // Also gives the steps that made the trace's inputs (--text, --model) their title and explanation, from
  // data/lessons/inputs.json in the trace's language (InputStep, trace/inputs.hpp).
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
  std::string number(unsigned long long n) const { return grouped_number(n, t_->selection.language); }
  // A copy with more values, for one step or one helper.
  LessonText with(const TextValues& more) const {
    LessonText copy = *this;
    for (const auto& [k, v] : more) copy.values_[k] = v;
    return copy;
  }

  // A phrase ("phrases/<name>"), filled in.
  std::string phrase(const TextKey& key) const;
  // The lesson's title and summary (its LessonInfo).
  static LessonInfo info(const std::string& lesson, const std::string& section, const std::string& language = "");

  struct Words {
    std::string id, title, explanation, code;
    std::optional<std::string> run;  // the notebook's cell (Step::run), when the content gives one
    std::string show;
  };
  Words step(const TextKey& key) const;

  // Trace::add's three forms, with the id, title, explanation and code (and the notebook's run and show)
  // from the content.
  template <class E>
  Step& add(const TextKey& key, const E& tensor) const {
    Words w = step(key);
    return notebook(w, t_->add(w.id, w.title, w.explanation, w.code, tensor));
  }
  template <class F, class... A>
  Step& add(const TextKey& key, std::vector<std::size_t> shape, F f, A... inputs) const {
    Words w = step(key);
    return notebook(w, t_->add(w.id, w.title, w.explanation, w.code, std::move(shape), std::move(f),
                               std::move(inputs)...));
  }
  template <class T>
  Step& add(const TextKey& key, std::vector<std::size_t> shape, Node<T> value) const {
    Words w = step(key);
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
  Step& notebook(Words& w, Step& s) const;
  // The content holding `path` (the lesson's, else the shared one), and the piece filled in.
  std::string text(const std::string& path, const std::string& variant) const;

  Trace* t_;
  const Content* own_;
  const Content* shared_;
  TextValues values_;
};

}  // namespace attn
