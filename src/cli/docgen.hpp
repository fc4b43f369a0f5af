#pragma once
// Documents generated from the option table and the lesson registry, so they cannot drift from the
// program: the man page attn.1, the bash completion, and the README's option tables (checked by a test).
#include <string>

namespace attn {

std::string man_page();
std::string bash_completion();
std::string readme_option_tables();

}  // namespace attn
