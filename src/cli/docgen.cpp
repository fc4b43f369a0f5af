#include "cli/docgen.hpp"

namespace attn {

std::string man_page() { return ""; }
std::string bash_completion() { return ""; }
std::string readme_option_tables() { return ""; }

}  // namespace attn
