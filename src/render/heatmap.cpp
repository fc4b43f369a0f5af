#include "render/heatmap.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/terminal_text.hpp"
#include "render/palette.hpp"
#include "text/words.hpp"

namespace attn {

// A number in at most 5 characters: 0.55, -1.25, 12.3, 1e+04.
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
std::string ansi_cell(const std::string& cell, double x, const TextStyle& style, bool diverging) {
  if (!style.color) return cell;
  const Rgb c = palette_color(diverging ? Palette::Diverging : Palette::Viridis, x);
  const bool light = is_light(c);
  const std::string fg = light ? "30" : "97";
  if (style.truecolor) {
    char bg[32];
    std::snprintf(bg, sizeof bg, "48;2;%d;%d;%d", static_cast<int>(std::lround(c.r)), static_cast<int>(std::lround(c.g)),
                  static_cast<int>(std::lround(c.b)));
    return "\x1b[" + fg + ";" + bg + "m" + cell + "\x1b[0m";
  }
  return "\x1b[" + fg + ";48;5;" + std::to_string(xterm256(c)) + "m" + cell + "\x1b[0m";
}

bool HeatMap::masked(std::size_t i, std::size_t j) const {
  return (causal && j > first + i) || at(i, j) == -std::numeric_limits<float>::infinity();
}

double HeatMap::fixed_lo() const { return step_min < 0.0 ? -std::max(-step_min, step_max) : 0.0; }
double HeatMap::fixed_hi() const {
  return step_min < 0.0 ? std::max(-step_min, step_max) : step_max <= 1.0 ? 1.0 : step_max;
}

bool HeatMap::diverging(HeatScale scale) const { return scale == HeatScale::Fixed && step_min < 0.0; }

double HeatMap::shade(std::size_t i, std::size_t j, HeatScale scale) const {
  const float v = at(i, j);
  if (masked(i, j) || !std::isfinite(v)) return std::numeric_limits<double>::quiet_NaN();
  double lo = min, span = max - min;
  if (scale == HeatScale::Row) {
    lo = row_lo[i];
    span = row_span[i];
  } else if (scale == HeatScale::Fixed) {
    lo = fixed_lo();
    span = fixed_hi() - lo;
  }
  // A single value (a row that puts all its weight on one key, a matrix of zeros on its own scale) sits at
  // the top of the palette.
  return span > 0.0 ? std::clamp((static_cast<double>(v) - lo) / span, 0.0, 1.0) : 1.0;
}

namespace {

// A scale's end as short as it reads: "0", "1", "0.25", "-2.3".
std::string end_number(double v) {
  std::string s = heat_number(static_cast<float>(v));
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

}  // namespace

std::string HeatMap::low_end(HeatScale scale) const {
  if (scale == HeatScale::Row) return words.screen("row_min");
  return end_number(scale == HeatScale::Fixed ? fixed_lo() : min);
}

std::string HeatMap::high_end(HeatScale scale) const {
  if (scale == HeatScale::Row) return words.screen("row_max");
  return end_number(scale == HeatScale::Fixed ? fixed_hi() : max);
}

std::string HeatMap::scale_words(HeatScale scale) const {
  const std::string range = words.screen("here",
                                   {{"min", heat_number(static_cast<float>(min))}, {"max", heat_number(static_cast<float>(max))}});
  switch (scale) {
    case HeatScale::Row: return words.screen("scale_row");
    case HeatScale::Matrix: return words.screen("scale_matrix");
    case HeatScale::Fixed:
    default:
      if (step_min < 0.0) return words.screen("scale_signed", {{"range", range}});
      if (step_max <= 1.0) return words.screen("scale_probabilities", {{"range", range}});
      return words.screen("scale_largest", {{"range", range}});
  }
}

namespace {

constexpr std::size_t kCell = 7;   // characters per cell: a key label of six, a token of four whole ('Your')
// Columns of a row label: the book's tokens whole as token_repr shows them ('journey', '␣journey').
constexpr std::size_t kLabelColumns = 10;
const char* const kMaskedCell = "\xc2\xb7";  // "·": a masked (future) cell

std::string pad_left(const std::string& s, std::size_t width, std::size_t visible) {
  return visible >= width ? s : std::string(width - visible, ' ') + s;
}

// Each row's min and max over its cells on the scale, and the whole matrix's.
void place_on_scale(HeatMap& m) {
  double glo = std::numeric_limits<double>::infinity(), ghi = -glo;
  for (std::size_t i = 0; i < m.rows; ++i) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t j = 0; j < m.keys; ++j)
      if (!m.masked(i, j) && std::isfinite(m.at(i, j))) {
        lo = std::min(lo, static_cast<double>(m.at(i, j)));
        hi = std::max(hi, static_cast<double>(m.at(i, j)));
      }
    glo = std::min(glo, lo);
    ghi = std::max(ghi, hi);
    m.row_lo.push_back(std::isfinite(lo) ? lo : 0.0);
    m.row_span.push_back(std::isfinite(lo) ? hi - lo : 0.0);
  }
  if (!std::isfinite(glo)) glo = ghi = 0.0;
  m.min = glo;
  m.max = ghi;
}

// One map in a pipe: every number in its cell.
std::string one_map(const HeatMap& m, const TextStyle& style) {
  const bool diverging = m.diverging(style.scale);
  std::string out = "  " + m.words.screen("heatmap", {{"caption", m.caption}}) + "\n";
  // Legend: the scale's ends, a ramp of the palette (in colour only: without it the cells are not shaded,
  // so no ramp would describe them), what the scale is and what the symbol means.
  std::string ramp;
  for (int k = 0; k < 8; ++k) ramp += ansi_cell("  ", k / 7.0, style, diverging);
  const std::string low = m.low_end(style.scale), high = m.high_end(style.scale);
  out += "  " + m.words.screen("colours") + " " +
         (style.color ? low + " " + ramp + " " + high : m.words.screen("span", {{"low", low}, {"high", high}})) +
         (m.causal ? "   " + std::string(kMaskedCell) + " " + m.words.screen("masked_later") : "") + "\n";
  out += "  " + m.scale_words(style.scale) + "\n";
  // Column labels: keys.
  for (const std::string& line :
       key_label_lines({m.labels.begin(), m.labels.begin() + m.keys}, kLabelColumns + 2, kCell))
    out += line + "\n";
  for (std::size_t i = 0; i < m.rows; ++i) {
    const std::string label = clip_label(m.labels[m.first + i], kLabelColumns);
    out += "  " + pad_left(label, kLabelColumns, display_width(label));
    for (std::size_t j = 0; j < m.keys; ++j) {
      if (m.masked(i, j)) {
        out += std::string(kCell - 1, ' ') + kMaskedCell;
        continue;
      }
      const float v = m.at(i, j);
      if (!std::isfinite(v)) {  // off the scale (overflowed scores): shown, not coloured
        const std::string text = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
        out += " " + pad_left(text, kCell - 1, text.size());
        continue;
      }
      const std::string text = heat_number(v);
      out += " " + ansi_cell(pad_left(text, kCell - 1, text.size()), m.shade(i, j, style.scale), style, diverging);
    }
    out += "\n";
  }
  if (!m.note.empty()) out += "  " + m.note + "\n";
  return out;
}

}  // namespace

std::vector<HeatMap> heat_maps(const Step& s, const std::vector<std::string>& tokens, const Words& words) {
  const AnyTensor& t = s.tensor;
  const std::size_t rank = t.dimension();
  if (rank < 2 || rank > 4) return {};
  const std::size_t keys = t.shape()[rank - 1], rows = t.shape()[rank - 2];
  if (keys > tokens.size() || rows == 0 || keys == 0 || s.first_query + rows > keys) return {};
  // (b, h, rows, keys): the first batch element's heads; an overview's (heads, rows, keys): every head.
  const bool heads_first = s.overview && rank == 3;
  const std::size_t heads = rank == 4 ? t.shape()[1] : heads_first ? t.shape()[0] : 1;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < keys; ++i) labels.push_back(s.of_tokens ? token_repr(tokens[i]) : std::to_string(i));
  std::vector<HeatMap> out;
  for (std::size_t h = 0; h < heads; ++h) {
    HeatMap m;
    m.words = words;
    m.caption = words.screen(s.of_tokens ? "caption_tokens" : "caption_positions");
    if (rank >= 3 && !heads_first) m.caption += words.screen("caption_batch", {{"b", std::to_string(t.shape()[0])}});
    m.common = m.caption;
    if (heads > 1 || heads_first) m.name = words.screen("head", {{"h", std::to_string(h)}});
    if (heads_first) {
      m.caption = m.name;
    } else if (rank == 4) {
      m.caption += words.screen("caption_head", {{"h", std::to_string(h)}});
    }
    if (h < s.head_notes.size()) m.note = visible(s.head_notes[h]);
    m.rows = rows;
    m.keys = keys;
    m.first = s.first_query;
    m.causal = s.causal;
    m.of_tokens = s.of_tokens;
    m.labels = labels;
    m.values.assign(t.data() + h * rows * keys, t.data() + (h + 1) * rows * keys);
    place_on_scale(m);
    out.push_back(std::move(m));
  }
  double lo = 0.0, hi = 0.0;
  for (std::size_t h = 0; h < out.size(); ++h) {
    lo = h ? std::min(lo, out[h].min) : out[h].min;
    hi = h ? std::max(hi, out[h].max) : out[h].max;
  }
  for (HeatMap& m : out) {
    m.step_min = lo;
    m.step_max = hi;
  }
  return out;
}

std::vector<std::string> key_label_lines(const std::vector<std::string>& labels, std::size_t indent, std::size_t cell) {
  bool fit = true;
  for (const std::string& label : labels) fit = fit && display_width(label) < cell;
  const std::size_t lines = fit ? 1 : std::min<std::size_t>(2, labels.size());
  std::vector<std::string> out(lines);
  std::vector<std::size_t> used(lines, 0);  // each line's columns so far
  for (std::size_t j = 0; j < labels.size(); ++j) {
    const std::size_t k = j % lines;
    const std::string label = clip_label(labels[j], fit ? cell - 1 : 2 * cell - 1);
    const std::size_t end = indent + cell * (j + 1), width = display_width(label);
    const std::size_t start = std::max(used[k], end > width ? end - width : 0);
    out[k] += std::string(start - used[k], ' ') + label;
    used[k] = start + width;
  }
  return out;
}

std::size_t heatmap_width(std::size_t keys) { return 2 + kLabelColumns + kCell * keys; }

std::string heatmaps(const Step& step, const std::vector<std::string>& tokens, const TextStyle& style) {
  const AnyTensor& t = step.tensor;
  const std::size_t keys = t.dimension() >= 2 && t.dimension() <= 4 ? t.shape().back() : 0;
  if (keys > kHeatmapMaxTokens && keys <= tokens.size())
    return "  " + style.words.screen("left_out", {{"n", std::to_string(kHeatmapMaxTokens)}}) + "\n";
  std::string out;
  for (const HeatMap& m : heat_maps(step, tokens, style.words)) out += (out.empty() ? "" : "\n") + one_map(m, style);
  return out;
}

CommonNote common_note(const std::vector<HeatMap>& maps) {
  CommonNote best;
  for (std::size_t a = 0; a < maps.size(); ++a) {
    if (maps[a].note.empty()) continue;
    const auto n = static_cast<std::size_t>(std::count_if(maps.begin(), maps.end(), [&](const HeatMap& m) { return m.note == maps[a].note; }));
    if (n >= 2 && n > best.heads) best = {maps[a].note, n};
  }
  return best;
}

std::string CommonNote::said(std::size_t of, const Words& words) const {
  if (note.empty()) return "";
  return words.screen("common_note", {{"k", std::to_string(heads)}, {"n", std::to_string(of)}, {"note", note}});
}

}  // namespace attn
