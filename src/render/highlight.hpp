#pragma once
// The book's code as the html page shows it: Python highlighted as markup, each piece in a span of its kind
// (k keyword, s string, n number, c comment, f call), every character of it escaped (render/figure.hpp's
// markup), the line feeds kept.
#include <string>

namespace attn {

std::string highlight_python(const std::string& code);

}  // namespace attn
