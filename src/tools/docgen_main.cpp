// attn-docgen: prints a document generated from attn's option table (docs/architecture.md): the man
// page, the bash completion, the README's option tables, or fuzz_cli's dictionary. The build runs it; it is not installed.
#include <iostream>
#include <string>

#include "tools/docgen.hpp"

int main(int argc, char** argv) {
  const std::string what = argc == 2 ? argv[1] : "";
  if (what == "man") {
    std::cout << attn::man_page();
  } else if (what == "bash-completion") {
    std::cout << attn::bash_completion();
  } else if (what == "readme-options") {
    std::cout << attn::readme_option_tables();
  } else if (what == "fuzz-dict") {
    std::cout << attn::fuzz_dictionary();
  } else {
    std::cerr << "usage: attn-docgen man|bash-completion|readme-options|fuzz-dict\n";
    return 2;
  }
  return std::cout.flush() ? 0 : 1;
}
