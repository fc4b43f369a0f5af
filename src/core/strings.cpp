#include "core/strings.hpp"

#include <algorithm>
#include <cctype>

#include <charconv>
#include <cmath>
#include <sstream>

#include "core/terminal_text.hpp"

namespace attn {

std::string exact_number(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string shape_tuple(const std::vector<std::size_t>& shape) {
  std::string out = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

std::string py_float(double v) {
  if (std::isnan(v)) return "nan";  // repr() of any NaN; to_chars would write "-nan" for a negative one
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string with_commas(std::size_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string count_of(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::vector<std::string> wrap_words(const std::string& text, std::size_t width) {
  std::istringstream words(text);
  std::vector<std::string> lines;
  std::string word, line;
  while (words >> word) {
    if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string or_list(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i)
    out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return out;
}

namespace {

// Levenshtein distance, for "did you mean": a dozen lines, where a library would be a dependency for one loop.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

// Of `names`, the one nearest `word` if one is near (mha_wrapper -> mha-wrapper), else "".
std::string nearest_word(const std::string& word, const std::vector<std::string>& names) {
  std::string normal = word;
  for (char& c : normal) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, normal.size() / 3) + 1;
  for (const std::string& name : names) {
    const std::size_t d = edit_distance(normal, name);
    if (d < best_distance) best_distance = d, best = name;
  }
  return best;
}

}  // namespace attn
