#include "render/highlight.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "render/figure.hpp"

namespace attn {

namespace {

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_keyword(const std::string& w) {
  static const char* const kKeywords[] = {"and", "as", "assert", "break", "class", "continue", "def", "del", "elif",
                                          "else", "except", "False", "for", "from", "if", "import", "in", "is",
                                          "lambda", "None", "not", "or", "pass", "return", "self", "super", "True",
                                          "while", "with", "yield"};
  return std::any_of(std::begin(kKeywords), std::end(kKeywords), [&](const char* k) { return w == k; });
}

std::string span(const char* cls, const std::string& text) {
  return std::string("<span class=\"") + cls + "\">" + markup(text) + "</span>";
}

}  // namespace

// Written here rather than taken from highlight.js or Pygments: those would put a library (tens of kilobytes
// of script, or Python at render time) into every page for a few short lines of a known Python subset.
std::string highlight_python(const std::string& code) {
  std::string out;
  std::size_t i = 0;
  const std::size_t n = code.size();
  while (i < n) {
    const char c = code[i];
    if (c == '#') {  // a comment, to the end of the line
      const std::size_t end = std::min(code.find('\n', i), n);
      out += span("c", code.substr(i, end - i));
      i = end;
    } else if (c == '"' || c == '\'') {  // a string, to its closing quote on the line
      std::size_t j = i + 1;
      while (j < n && code[j] != c && code[j] != '\n') j += code[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, n);
      out += span("s", code.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) && (i == 0 || !is_word(code[i - 1]))) {
      std::size_t j = i;
      while (j < n && (is_word(code[j]) || code[j] == '.' ||
                       ((code[j] == '-' || code[j] == '+') && (code[j - 1] == 'e' || code[j - 1] == 'E'))))
        ++j;
      out += span("n", code.substr(i, j - i));
      i = j;
    } else if (is_word(c)) {
      std::size_t j = i;
      while (j < n && is_word(code[j])) ++j;
      const std::string word = code.substr(i, j - i);
      out += is_keyword(word) ? span("k", word) : j < n && code[j] == '(' ? span("f", word) : markup(word);
      i = j;
    } else {
      std::size_t j = i + 1;  // everything else up to the next piece that is highlighted
      while (j < n && !is_word(code[j]) && code[j] != '#' && code[j] != '"' && code[j] != '\'') ++j;
      out += markup_lines(code.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

}  // namespace attn
