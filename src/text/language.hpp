#pragma once
// The languages attn speaks, and what differs between them besides the words: which one a run speaks (the
// command line's --lang, else the environment's, resolved once where the options are bound), a count's
// plural form, and how a whole number is grouped in a sentence.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace attn {

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

// The language a run speaks, from what the options say: `given` is --lang's value ("en", "ru"; "" when not
// given), `otherwise` the language that speaks then (the environment's, or attn serve's own). "" for English:
// the one place "en" becomes "", the untranslated content.
std::string chosen_language(const std::string& given, const std::string& otherwise);

}  // namespace attn
