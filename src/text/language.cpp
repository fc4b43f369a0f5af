#include "text/language.hpp"

#include <algorithm>

namespace attn {

namespace {

std::size_t english_form(unsigned long long n) { return n == 1 ? 0 : 1; }

std::size_t russian_form(unsigned long long n) {
  if (n % 10 == 1 && n % 100 != 11) return 0;
  if (n % 10 >= 2 && n % 10 <= 4 && (n % 100 < 12 || n % 100 > 14)) return 1;
  return 2;
}

}  // namespace

const std::vector<std::string>& supported_languages() {
  static const std::vector<std::string> languages{"en", "ru"};
  return languages;
}

std::string language_of_environment(const std::function<std::string(const char*)>& env) {
  // gettext: the locale of messages is LC_ALL, else LC_MESSAGES, else LANG; the C locale (or none) means
  // untranslated, and LANGUAGE's list is read only when the locale is not C.
  std::string locale;
  for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
    locale = env(name);
    if (!locale.empty()) break;
  }
  if (locale.empty() || locale == "C" || locale == "POSIX" || locale.rfind("C.", 0) == 0) return "";
  const auto language_of = [](const std::string& name) {  // "ru_RU.UTF-8@x" -> "ru"
    return name.substr(0, name.find_first_of("_.@"));
  };
  const auto supported = [](const std::string& l) {
    const auto& all = supported_languages();
    return std::find(all.begin(), all.end(), l) != all.end();
  };
  // LANGUAGE's list, when set, is all gettext tries: a list naming no language attn speaks is English.
  std::string list = env("LANGUAGE");
  if (!list.empty()) {
    while (!list.empty()) {
      const auto colon = list.find(':');
      const std::string one = language_of(list.substr(0, colon));
      if (supported(one)) return one == "en" ? "" : one;
      list = colon == std::string::npos ? "" : list.substr(colon + 1);
    }
    return "";
  }
  const std::string l = language_of(locale);
  return supported(l) && l != "en" ? l : "";
}

std::string grouped_number(unsigned long long n, const std::string& language) {
  const std::string digits = std::to_string(n);
  const bool russian = language == "ru";
  if (russian && digits.size() < 5) return digits;
  const std::string separator = russian ? "\xc2\xa0" : ",";  // U+00A0 in UTF-8
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += separator;
    out += digits[i];
  }
  return out;
}

// CLDR's plural rules for whole numbers (unicode.org/cldr, "Language Plural Rules"), written here: a
// rule is a line of arithmetic per language, and no library of the project carries them.
const PluralRule* plural_rule(const std::string& language) {
  static const PluralRule english{{"one", "other"}, english_form};
  static const PluralRule russian{{"one", "few", "many"}, russian_form};
  if (language.empty() || language == "en") return &english;
  if (language == "ru") return &russian;
  return nullptr;
}

std::string chosen_language(const std::string& given, const std::string& otherwise) {
  if (given.empty()) return otherwise;
  return given == "en" ? "" : given;
}

}  // namespace attn
