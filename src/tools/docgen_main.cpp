// attn-docgen: prints a document generated from attn's option table (docs/architecture.md): the man
// page, the bash completion, the README's option tables, or fuzz_cli's dictionary. The build runs it; it is not installed.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "lessons/registry.hpp"
#include "tools/docgen.hpp"

namespace {
std::string slurp(std::istream& in) {
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc == 2 || argc == 4 || argc == 5 ? argv[1] : "";
  if (what == "man") {
    std::cout << attn::man_page();
  } else if (what == "bash-completion") {
    std::cout << attn::bash_completion();
  } else if (what == "readme-options") {
    std::cout << attn::readme_option_tables();
  } else if (what == "fuzz-dict") {
    std::cout << attn::fuzz_dictionary();
  } else if (what == "lesson-page" && argc == 4) {
    // attn-docgen lesson-page LANG LESSON: docs/lessons/LESSON.LANG.md
    try {
      std::cout << attn::lesson_page(argv[2], argv[3]);
    } catch (const std::exception& e) {
      return std::cerr << "attn-docgen: " << e.what() << "\n", 1;
    }
  } else if (what == "lesson-pages" && argc == 4) {
    // attn-docgen lesson-pages LANG DIR: every lesson's page, DIR/LESSON.LANG.md (after a translation changed)
    for (const attn::Lesson& lesson : attn::lessons()) {
      const std::string path = std::string(argv[3]) + "/" + lesson.info.name + "." + argv[2] + ".md";
      std::ofstream out(path);
      try {
        if (!(out << attn::lesson_page(argv[2], lesson.info.name)) || !out.flush())
          return std::cerr << "attn-docgen: cannot write " << path << "\n", 1;
      } catch (const std::exception& e) {
        return std::cerr << "attn-docgen: " << e.what() << "\n", 1;
      }
    }
  } else if (what == "translation" && argc == 5) {
    // attn-docgen translation LANG ENGLISH.json TRANSLATION.json: the translation brought up to date, written
    // over TRANSLATION.json once whole (a new file when there is none).
    const std::string english_path = argv[3], path = argv[4];
    std::ifstream english(english_path), old(path);
    if (!english) return std::cerr << "attn-docgen: cannot read " << english_path << "\n", 1;
    const std::string text = attn::translation_file(argv[2], english_path, slurp(english), path, old ? slurp(old) : "");
    const std::string staged = path + ".new";
    std::ofstream out(staged);
    if (!(out << text) || !out.flush()) return std::cerr << "attn-docgen: cannot write " << staged << "\n", 1;
    out.close();
    return std::rename(staged.c_str(), path.c_str()) == 0 ? 0 : 1;
  } else {
    std::cerr << "usage: attn-docgen man|bash-completion|readme-options|fuzz-dict|translation LANG EN.json TR.json|lesson-page LANG LESSON|lesson-pages LANG DIR\n";
    return 2;
  }
  return std::cout.flush() ? 0 : 1;
}
