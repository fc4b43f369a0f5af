#pragma once
// Documents generated from the option table and the lesson registry, so they cannot drift from the
// program: the man page attn.1, the bash completion, the README's option tables (checked by a test), and
// the libFuzzer dictionary of fuzz_cli (scripts/fuzz.sh writes it before fuzzing).
#include <string>

namespace attn {

std::string man_page();
std::string bash_completion();
std::string readme_option_tables();
std::string fuzz_dictionary();

}  // namespace attn
