#include "render/heatmap.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/terminal_text.hpp"
#include "render/palette.hpp"

namespace attn {

// A number in at most kCell - 1 characters: 0.55, -1.25, 12.3, 1e+04.
std::string heat_number(float v) {
  char buf[32];
  const double a = std::fabs(static_cast<double>(v));
  if (a < 9.995) {
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
  } else if (a < 99.95) {
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(v));
  } else if (a < 9999.5) {
    std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%.0e", static_cast<double>(v));
  }
  return buf;
}

// Background colour for a value in [0, 1], with black or white text, whichever reads better.
std::string ansi_cell(const std::string& cell, double x, const TextStyle& style) {
  if (!style.color) return cell;
  const Rgb c = viridis(x);
  const bool light = is_light(c);
  const std::string fg = light ? "30" : "97";
  if (style.truecolor) {
    char bg[32];
    std::snprintf(bg, sizeof bg, "48;2;%d;%d;%d", static_cast<int>(c.r), static_cast<int>(c.g), static_cast<int>(c.b));
    return "\x1b[" + fg + ";" + bg + "m" + cell + "\x1b[0m";
  }
  return "\x1b[" + fg + ";48;5;" + std::to_string(xterm256(c)) + "m" + cell + "\x1b[0m";
}

namespace {

constexpr std::size_t kCell = 6;   // characters per cell
constexpr std::size_t kLabel = 8;  // characters of a row label
const char* const kMasked = "\xc2\xb7";  // "·": a masked (future) cell

std::string pad_left(const std::string& s, std::size_t width, std::size_t visible) {
  return visible >= width ? s : std::string(width - visible, ' ') + s;
}

// One (rows, keys) matrix m: row i is the query at position first + i, column j the key at position j.
std::string one_map(const float* m, std::size_t rows, std::size_t keys, std::size_t first,
                    const std::vector<std::string>& labels, bool causal, const std::string& caption,
                    const TextStyle& style) {
  const auto is_masked = [&](std::size_t i, std::size_t j) {
    return (causal && j > first + i) || m[i * keys + j] == -std::numeric_limits<float>::infinity();
  };
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < keys; ++j)
      if (!is_masked(i, j) && std::isfinite(m[i * keys + j])) {
        lo = std::min(lo, static_cast<double>(m[i * keys + j]));
        hi = std::max(hi, static_cast<double>(m[i * keys + j]));
      }
  if (!std::isfinite(lo)) lo = hi = 0.0;
  const double span = hi > lo ? hi - lo : 1.0;

  std::string out = "  " + caption + "\n";
  // Legend: the range, a ramp of the palette, what the symbol means.
  std::string ramp;
  for (int k = 0; k < 8; ++k) ramp += ansi_cell(style.color ? "  " : "", k / 7.0, style);
  out += "  min " + heat_number(static_cast<float>(lo)) + " " + (style.color ? ramp + " " : "-> ") + "max " +
         heat_number(static_cast<float>(hi)) + (causal ? "   " + std::string(kMasked) + " masked (a later token)" : "") +
         "\n";
  // Column labels: keys.
  out += std::string(kLabel + 2, ' ');
  for (std::size_t j = 0; j < keys; ++j) {
    const std::string label = clip_to_width(labels[j], kCell - 1);
    out += pad_left(label, kCell, display_width(label));
  }
  out += "\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const std::string label = clip_to_width(labels[first + i], kLabel);
    out += "  " + pad_left(label, kLabel, display_width(label));
    for (std::size_t j = 0; j < keys; ++j) {
      if (is_masked(i, j)) {
        out += std::string(kCell - 1, ' ') + kMasked;
        continue;
      }
      const float v = m[i * keys + j];
      if (!std::isfinite(v)) {  // off the scale (overflowed scores): shown, not coloured
        const std::string text = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
        out += " " + pad_left(text, kCell - 1, text.size());
        continue;
      }
      const std::string text = heat_number(v);
      out += " " + ansi_cell(pad_left(text, kCell - 1, text.size()), (static_cast<double>(v) - lo) / span, style);
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string heatmaps(const AnyTensor& t, const std::vector<std::string>& tokens, bool causal, bool of_tokens,
                     const TextStyle& style, std::size_t first_query) {
  const std::size_t rank = t.dimension();
  if (rank < 2 || rank > 4) return {};
  const std::size_t keys = t.shape()[rank - 1], rows = t.shape()[rank - 2];
  // Keys are the tokens from position 0; rows are queries among them (all of them for a square matrix).
  if (keys > tokens.size() || rows == 0 || first_query + rows > keys) return {};
  if (keys > kHeatmapMaxTokens)
    return "  (heatmap left out: more than " + std::to_string(kHeatmapMaxTokens) + " tokens)\n";
  const std::size_t heads = rank == 4 ? t.shape()[1] : 1;
  // Token text comes from outside: control characters made visible before it is clipped to a column.
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < keys; ++i) labels.push_back(of_tokens ? visible(tokens[i]) : std::to_string(i));
  std::string out;
  for (std::size_t h = 0; h < heads; ++h) {
    std::string caption = of_tokens ? "heatmap: rows are queries, columns are keys"
                                    : "heatmap: rows and columns are positions (not queries and keys)";
    if (rank >= 3) caption += "; batch 0 of " + std::to_string(t.shape()[0]);
    if (rank == 4) caption += ", head " + std::to_string(h);
    out += (h ? "\n" : "") + one_map(t.data() + h * rows * keys, rows, keys, first_query, labels, causal, caption, style);
  }
  return out;
}

}  // namespace attn
