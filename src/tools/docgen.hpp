#pragma once
// Documents generated from the option table and the lesson registry, so they cannot drift from the
// program: the man page attn.1, the bash completion, the README's option tables (checked by a test), and
// the libFuzzer dictionary of fuzz_cli (scripts/fuzz.sh writes it before fuzzing), the translation files'
// entries to fill, and the lessons' pages in another language (docs/lessons/<lesson>.<language>.md).
#include <string>

namespace attn {

std::string man_page();
std::string bash_completion();
std::string readme_option_tables();
std::string fuzz_dictionary();
// The translation file data/lessons/<language>/<name>.json brought up to date with the English content: every
// translatable piece in the English file's order, an entry still fresh kept, and one that is missing or stale
// given with "text": "" and the English it must translate ("english"), for a translator to fill in.
// `english` and `translation` are the two files' text ("" when there is no translation yet).
// docs/lessons/<lesson>.<language>.md: the lesson's page in a translation's language, from the same content as
// `attn <lesson> --lang <language>` prints: its title and summary, how to run it, and a table of the steps
// its book run shows (id, title, explanation), as that run fills them in. Throws std::invalid_argument for a
// lesson the registry does not have or a language attn does not speak (other than English).
std::string lesson_page(const std::string& language, const std::string& lesson);
std::string translation_file(const std::string& language, const std::string& english_path, const std::string& english,
                             const std::string& translation_path, const std::string& translation);

}  // namespace attn
