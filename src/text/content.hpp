#pragma once
// The program's words as content: each lesson's step titles, explanations and PyTorch code, its notes and
// its option help live in data/lessons/<lesson>.json (what several lessons share, the batch, the
// parameters, in data/lessons/shared.json; the input steps' in inputs.json; the renderers' own words in
// screen.json and page.json), not in the C++. The C++ keeps the ids, the shapes, the lazy computations and
// a small map of values (`who`, `n`, `d_out`, ...) that fill the text's named placeholders through {fmt}:
// "Attention scores of {who}". This file loads, checks, translates and fills that content; a lesson reads it
// through its LessonText (lessons/lesson_text.hpp), everything else through a Words (text/words.hpp).
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

#include "text/language.hpp"

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

}  // namespace attn
