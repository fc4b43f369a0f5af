#include "text/content.hpp"

#include <cstdio>
#include <mutex>
#include <stdexcept>

#include <fmt/args.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/strings.hpp"
#include "io/files.hpp"
#include "io/paths.hpp"

namespace attn {

namespace {

// The sections a content file may have.
const char* const kSections = "lesson, steps, phrases, english_only";

// A lesson's content is a few kilobytes; a translation no more.
constexpr FileKind kContentFile{"a lesson's content", std::size_t{1} << 20};

bool name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

std::string join_lines(const nlohmann::json& lines, const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].is_string()) throw std::invalid_argument(where + ": a line of code that is not a string");
    out += (i ? "\n" : "") + lines[i].get<std::string>();
  }
  return out;
}

// Throws unless each plural of `text` has one form per category of `language`'s rule.
void check_plurals(const std::string& text, const std::string& path, const std::string& language) {
  const std::vector<Plural> found = plurals(text);  // throws on a malformed placeholder
  if (found.empty()) return;
  const PluralRule* rule = plural_rule(language);
  if (!rule) throw std::invalid_argument(path + ": no plural rule for \"" + language + "\"");
  for (const Plural& p : found)
    if (p.forms.size() != rule->categories.size()) {
      std::string categories;
      for (const auto& c : rule->categories) categories += (categories.empty() ? "" : ", ") + c;
      throw std::invalid_argument(path + ": the plural {" + p.name + "|...} has " + count_of(p.forms.size(), "form") +
                                  "; " + (language.empty() ? "en" : language) + " has " +
                                  std::to_string(rule->categories.size()) + " (" + categories + ")");
    }
}

// One piece: a string, an array of lines, or (with variants allowed) an object of those; its placeholders
// and plurals checked (plurals by `language`'s rule).
void read_piece(const nlohmann::json& v, const std::string& path, bool variants_allowed, const std::string& language,
                std::map<std::string, std::string>& out, std::set<std::string>& has_variants) {
  if (v.is_string()) {
    out[path] = v.get<std::string>();
  } else if (v.is_array()) {
    out[path] = join_lines(v, path);
  } else if (v.is_object() && variants_allowed && !v.empty()) {
    has_variants.insert(path);
    for (const auto& [name, piece] : v.items())
      read_piece(piece, path + "/" + name, false, language, out, has_variants);
  } else {
    throw std::invalid_argument(path + ": neither text, lines of code nor an object of variants");
  }
  if (!v.is_object()) check_plurals(out[path], path, language);
}

// The placeholders of `format`, each with where it is: [begin, end) of its braces. Calls f(begin, end,
// name, forms) for each; forms is empty for a plain {name}.
template <class F>
void scan_placeholders(const std::string& format, F f) {
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        ++i;
        continue;
      }
      throw std::invalid_argument("a '}' that closes nothing (write }} for a brace) in \"" + format + "\"");
    }
    if (c != '{') continue;
    if (i + 1 < format.size() && format[i + 1] == '{') {
      ++i;
      continue;
    }
    const std::size_t end = format.find('}', i);
    if (end == std::string::npos) throw std::invalid_argument("a '{' never closed in \"" + format + "\"");
    const std::string inside = format.substr(i + 1, end - i - 1);
    if (inside.find('{') != std::string::npos) throw std::invalid_argument("a '{' inside a placeholder in \"" + format + "\"");
    const std::size_t bar = inside.find('|');
    const std::string name = inside.substr(0, bar);
    if (name.empty()) throw std::invalid_argument("an empty placeholder {} in \"" + format + "\"");
    for (const char n : name)
      if (!name_char(n))
        throw std::invalid_argument("placeholder {" + name + "}: a name is a-z, 0-9 and _, no format spec");
    std::vector<std::string> forms;
    for (std::size_t from = bar; from != std::string::npos;) {
      const std::size_t next = inside.find('|', from + 1);
      forms.push_back(inside.substr(from + 1, next == std::string::npos ? std::string::npos : next - from - 1));
      from = next;
    }
    f(i, end + 1, name, forms);
    i = end;
  }
}

}  // namespace

// FNV-1a, 64 bits, written here: the hash must be the same on every machine and every build, which
// std::hash does not promise, and none of the project's libraries offers a stable one; six lines do.
std::string text_hash(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Scanned here rather than by {fmt}, which checks a format when it fills it but has no way to list the
// names a format asks for, and the tests need the list (an unknown placeholder fails before any run); and
// {fmt} has no plurals.
std::vector<std::string> placeholders(const std::string& format) {
  std::vector<std::string> names;
  scan_placeholders(format, [&](std::size_t, std::size_t, const std::string& name, const std::vector<std::string>&) {
    names.push_back(name);
  });
  return names;
}

std::vector<Plural> plurals(const std::string& format) {
  std::vector<Plural> out;
  scan_placeholders(format, [&](std::size_t, std::size_t, const std::string& name, const std::vector<std::string>& forms) {
    if (!forms.empty()) out.push_back({name, forms});
  });
  return out;
}

Content::Content(const std::string& path, const std::string& english, const std::string& translation_path,
                 const std::string& translation)
    : path_(path), translation_path_(translation_path) {
  try {
    const auto doc = nlohmann::ordered_json::parse(english);
    if (!doc.is_object()) throw std::invalid_argument("not a JSON object");
    for (const auto& [section, body] : doc.items()) {
      if (!body.is_object() && section != "english_only") throw std::invalid_argument(section + ": not an object");
      if (section == "steps") {
        for (const auto& [id, fields] : body.items()) {
          if (!fields.is_object()) throw std::invalid_argument("steps/" + id + ": not an object");
          placeholders(id);
          step_patterns_.push_back(id);
          for (const auto& [field, v] : fields.items()) {
            if (field != "title" && field != "explanation" && field != "code" && field != "run" && field != "show")
              throw std::invalid_argument("steps/" + id + "/" + field +
                                          ": a step has a title, an explanation and code (and a notebook's run and show)");
            read_piece(nlohmann::json(v), "steps/" + id + "/" + field, true, "en", english_, has_variants_);
          }
          for (const char* field : {"title", "explanation", "code"})
            if (!fields.contains(field))
              throw std::invalid_argument("steps/" + id + ": no " + std::string(field) + " (\"\" if it has none)");
        }
      } else if (section == "phrases" || section == "lesson") {
        for (const auto& [name, v] : body.items())
          read_piece(nlohmann::json(v), section + "/" + name, true, "en", english_, has_variants_);
      } else if (section == "english_only") {
        if (!body.is_array()) throw std::invalid_argument("english_only: not an array of paths");
        for (const auto& v : body) {
          if (!v.is_string()) throw std::invalid_argument("english_only: not an array of paths");
          english_only_.push_back(v.get<std::string>());
        }
      } else {
        throw std::invalid_argument(section + ": not a section: " + kSections);
      }
    }
  } catch (const std::bad_alloc&) {
    throw;  // out of memory, or past the memory budget (core/heap_budget.hpp): not a malformed file
  } catch (const std::exception& e) {
    throw InputError(path + ": malformed lesson content: " + e.what());
  }
  if (translation_path.empty()) return;
  try {
    const auto doc = nlohmann::json::parse(translation);
    if (!doc.is_object() || !doc.contains("entries") || !doc["entries"].is_object())
      throw std::invalid_argument("no object \"entries\"");
    if (doc.contains("language") && doc["language"].is_string()) translation_language_ = doc["language"].get<std::string>();
    for (const auto& [key, entry] : doc["entries"].items()) {
      if (!entry.is_object() || !entry.contains("source") || !entry.contains("text") || !entry["source"].is_string())
        throw std::invalid_argument(key + ": an entry is {\"source\": hash, \"text\": ...}");
      const auto en = english_.find(key);
      if (entry["text"] == "" && en != english_.end() && !en->second.empty())
        continue;  // not translated yet (attn-docgen translation's "todo"): the English
      std::map<std::string, std::string> one;
      std::set<std::string> unused;
      read_piece(entry["text"], key, false, translation_language_, one, unused);
      translated_[key] = {entry["source"].get<std::string>(), one[key]};
    }
  } catch (const std::bad_alloc&) {
    throw;  // out of memory, or past the memory budget (core/heap_budget.hpp): not a malformed file
  } catch (const std::exception& e) {
    throw InputError(translation_path + ": malformed translation: " + e.what());
  }
}

bool Content::has(const std::string& path) const {
  return english_.count(path) != 0 || has_variants_.count(path) != 0;
}

const std::string& Content::piece(const std::string& path, const std::string& variant) const {
  const bool variants = has_variants_.count(path) != 0;
  if (variants && variant.empty())
    throw std::logic_error(path_ + ": " + path + " has variants, and the lesson names none");
  const std::string full = variants ? path + "/" + variant : path;
  const auto it = english_.find(full);
  if (it == english_.end()) throw std::logic_error(path_ + ": no text " + full);
  mark_used(full);
  const auto tr = translated_.find(full);
  return tr != translated_.end() ? tr->second.second : it->second;
}

std::string Content::language(const std::string& path, const std::string& variant) const {
  const std::string full = has_variants_.count(path) != 0 ? path + "/" + variant : path;
  return translated_.count(full) != 0 ? translation_language_ : "en";
}

std::vector<std::string> Content::paths() const {
  std::vector<std::string> out;
  for (const auto& [path, text] : english_) out.push_back(path);
  return out;
}

bool Content::translatable(const std::string& full_path) const {
  const auto under = [&](const std::string& prefix) {
    return full_path == prefix || full_path.compare(0, prefix.size() + 1, prefix + "/") == 0;
  };
  if (full_path.rfind("steps/", 0) == 0) {  // steps/<id>/<field>[/<variant>]; no id holds a /
    const auto field_at = full_path.find('/', 6);
    const std::string rest = field_at == std::string::npos ? "" : full_path.substr(field_at + 1);
    if (rest.rfind("code", 0) == 0 || rest.rfind("run", 0) == 0 || rest.rfind("show", 0) == 0) return false;
  }
  for (const std::string& path : english_only_)
    if (under(path)) return false;
  return true;
}

std::optional<std::string> Content::fresh_translation(const std::string& full_path) const {
  const auto tr = translated_.find(full_path);
  const auto en = english_.find(full_path);
  if (tr == translated_.end() || en == english_.end() || text_hash(en->second) != tr->second.first) return std::nullopt;
  return tr->second.second;
}

std::vector<std::string> Content::translatable_paths() const {
  std::vector<std::string> out;
  for (const auto& [path, text] : english_)
    if (translatable(path)) out.push_back(path);
  return out;
}

std::vector<std::string> Content::stale_entries() const {
  std::vector<std::string> out;
  for (const auto& [path, entry] : translated_) {
    const auto it = english_.find(path);
    if (it == english_.end() || text_hash(it->second) != entry.first) out.push_back(path);
  }
  return out;
}

const Content& lesson_content(const std::string& name, const std::string& language) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<Content>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{name, language}];
  if (!slot) slot = load_lesson_content(name, language);
  return *slot;
}

std::unique_ptr<Content> load_lesson_content(const std::string& name, const std::string& language) {
  const std::string path = find_data_file("lessons/" + name + ".json");
  if (path.empty()) throw InputError("lessons/" + name + ".json: the lesson's text is missing (looked in " + data_dirs_text() + ")");
  const std::string translated = language.empty() ? "" : find_data_file("lessons/" + language + "/" + name + ".json");
  return std::make_unique<Content>(path, read_regular_file(path, kContentFile), translated,
                                   translated.empty() ? "" : read_regular_file(translated, kContentFile));
}

std::string fill(const std::string& format, const TextValues& values, const std::string& where,
                 const std::string& language) {
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  // In one pass: every placeholder is given, and each plural becomes the form its count picks, `#` the
  // count, before {fmt} fills the rest.
  std::string expanded;
  std::size_t copied = 0;
  scan_placeholders(format, [&](std::size_t begin, std::size_t end, const std::string& name,
                                const std::vector<std::string>& forms) {
    const auto it = values.find(name);
    if (it == values.end()) throw std::logic_error(where + " uses {" + name + "}, which the lesson does not give");
    if (forms.empty()) return;
    const std::string& count = it->second;
    if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos)
      throw std::logic_error(where + ": the plural {" + name + "|...} is given \"" + count + "\", not a whole number");
    const PluralRule* rule = plural_rule(language);
    if (!rule) throw std::logic_error(where + ": no plural rule for \"" + language + "\"");
    std::size_t form = rule->form(std::stoull(count));
    if (form >= forms.size()) form = forms.size() - 1;  // the content's check makes this never so
    std::string chosen;
    for (const char ch : forms[form]) chosen += ch == '#' ? count : std::string(1, ch);
    expanded.append(format, copied, begin - copied);
    expanded += chosen;
    copied = end;
  });
  expanded.append(format, copied, std::string::npos);
  for (const auto& [name, value] : values) args.push_back(fmt::arg(name.c_str(), value));
  try {
    return fmt::vformat(expanded, args);
  } catch (const fmt::format_error& e) {
    throw std::logic_error(where + ": " + e.what());
  }
}

}  // namespace attn
