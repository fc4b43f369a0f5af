#include "render/figure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/cancel.hpp"
#include "core/terminal_text.hpp"
#include "render/heatmap.hpp"
#include "render/palette.hpp"
#include "text/words.hpp"

namespace attn {

namespace {

constexpr double kTitleCharWidth = 8.4;  // the title's 14 px bold monospace character
constexpr double kCharWidth = 7.0;  // an 11.5px monospace character, about

// SVG coordinates with one decimal ("52", "26.5").
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// A number as it is printed in a cell: four decimals as PyTorch prints the book's weights, fewer for
// larger values, so it fits in 7 characters.
std::string cell_text(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  const double a = std::fabs(static_cast<double>(v));
  if (a < 9.99995) {
    std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(v));
  } else if (a < 9999.95) {
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%.1e", static_cast<double>(v));
  }
  return buf;
}

std::string position_label(const HeatMap& m, std::size_t position) {
  return m.of_tokens ? std::to_string(position) + " " + m.labels[position] : std::to_string(position);
}

// "query 1 '␣journey', key 0 'Your'": what a cell relates, for its description.
std::string pair_text(const HeatMap& m, std::size_t i, std::size_t j) {
  return m.of_tokens ? m.words.page("pair_tokens", {{"q", position_label(m, m.first + i)}, {"k", position_label(m, j)}})
                     : m.words.page("pair_positions", {{"r", std::to_string(m.first + i)}, {"c", std::to_string(j)}});
}

const HeatScale kScales[] = {HeatScale::Fixed, HeatScale::Matrix, HeatScale::Row};
const char* scale_name(HeatScale s) { return s == HeatScale::Row ? "row" : s == HeatScale::Matrix ? "matrix" : "fixed"; }

// Black or white, whichever reads better on the cell's colour.
std::string ink(double x, bool diverging) {
  return is_light(palette_color(diverging ? Palette::Diverging : Palette::Viridis, x)) ? "#000000" : "#ffffff";
}

// ` data-NAME-fixed="..." data-NAME-matrix="..." data-NAME-row="..."`: a value on every scale, for the page's
// scale buttons.
template <class F>
std::string on_every_scale(const char* name, F value) {
  std::string out;
  for (const HeatScale s : kScales) out += std::string(" data-") + name + "-" + scale_name(s) + "=\"" + value(s) + "\"";
  return out;
}

}  // namespace

std::string svg_open(double width, double height, const FigureOptions& o, const std::string& label) {
  // A file of its own has its title on top, 14 px bold, about 8.4 px a column: the figure is at least as wide.
  if (o.standalone) width = std::max(width, 20.0 + static_cast<double>(display_width(o.title)) * kTitleCharWidth);
  std::string out = "<svg";
  if (o.standalone) out += " xmlns=\"http://www.w3.org/2000/svg\"";
  out += " width=\"" + num(width) + "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
         "\" class=\"figure\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"11.5\"";
  if (o.standalone) {
    // fill for its own text, color for a page figure's currentColor inside it (render/svg.cpp stacks them)
    out += " role=\"img\" aria-labelledby=\"" + o.uid + "-title\" fill=\"#1a1a1a\" color=\"#1a1a1a\">\n";
    out += "<title id=\"" + o.uid + "-title\">" + markup(o.title) + "</title>\n";
    out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    out += "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + markup(o.title) + "</text>\n";
  } else {
    out += " role=\"group\" aria-label=\"" + html_escape(label) + "\" fill=\"currentColor\">\n";
  }
  return out;
}

std::string html_escape(const std::string& raw) {
  const bool plain = std::all_of(raw.begin(), raw.end(), [](char c) {
    return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t';  // ASCII XML allows: the common case, as it is
  });
  const std::string text = plain ? raw : xml_safe(raw);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string markup(const std::string& text) { return html_escape(visible(text)); }

std::string markup_lines(const std::string& text) {
  std::string out;
  std::size_t from = 0;
  while (true) {
    const std::size_t end = text.find('\n', from);
    out += markup(text.substr(from, end == std::string::npos ? std::string::npos : end - from));
    if (end == std::string::npos) return out;
    out += '\n';
    from = end + 1;
  }
}

std::string palette_hex(double x, bool diverging) {
  const Rgb c = palette_color(diverging ? Palette::Diverging : Palette::Viridis, x);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<unsigned>(std::lround(c.r)),
                static_cast<unsigned>(std::lround(c.g)), static_cast<unsigned>(std::lround(c.b)));
  return buf;
}

namespace {

// A legend's texts on a scale: its two ends and its words. One map: the map's own; several (a grid): the
// same for every map, ends that are the same for every map (fixed), or the words "min" and "max" (each
// map's own, or each row's).
struct LegendText {
  std::string low, high, words;
};
// `m`: the first map (all of a step's share its fixed scale); `several`: a grid of maps.
LegendText legend_text(const HeatMap& m, bool several, HeatScale s) {
  const auto say = [&](const char* name, const TextValues& values = {}) { return m.words.page(name, values); };
  if (!several) return {m.low_end(s), m.high_end(s), say("colours", {{"words", m.scale_words(s)}})};
  if (s == HeatScale::Fixed) {
    // The fixed scale is the step's, and so are the values its words say the maps hold: a map of no cells
    // with the step's range, for its words.
    HeatMap all;
    all.words = m.words;
    all.min = all.step_min = m.step_min;
    all.max = all.step_max = m.step_max;
    return {all.low_end(s), all.high_end(s), say("colours", {{"words", all.scale_words(s)}})};
  }
  if (s == HeatScale::Row) return {m.low_end(s), m.high_end(s), say("colours", {{"words", say("key_row")}})};
  return {say("map_min"), say("map_max"), say("colours", {{"words", say("key_matrix")}})};
}

// The legend's group at (12, top), for the first map `m` of one map or of a grid (`several`), `causal` where
// any of them masks keys: the palette between the scale's two ends, what the scale is, and the masked cells'
// pattern (`hatch`, defined by the caller); its width in `width`.
std::string legend_group(const HeatMap& m, bool several, bool causal, const FigureOptions& o, double top,
                         const std::string& hatch, double& width) {
  const LegendText shown = legend_text(m, several, o.scale);
  std::size_t words = 0, ends = 7;  // room for the longer end on any scale: "row min" is 7 columns in English
  for (const HeatScale sc : kScales) {
    const LegendText t = legend_text(m, several, sc);
    words = std::max(words, display_width(t.words));
    ends = std::max({ends, display_width(t.low), display_width(t.high)});
  }
  const std::string masked_words = m.words.page("masked_key");
  // Its right edge, as drawn below: the low end, the swatches, the high end, the masked cells' swatch and
  // name; or the scale's words under them; then a margin.
  const double end_width = static_cast<double>(ends) * kCharWidth;
  const double masked_width = causal ? 20.0 + static_cast<double>(display_width(masked_words)) * kCharWidth : 0.0;
  width = std::max(12.0 + end_width + 8.0 + 24 * 10.0 + 8.0 + end_width + 20.0 + masked_width,
                   12.0 + static_cast<double>(words) * kCharWidth) +
          12.0;
  const bool diverging = m.diverging(o.scale);
  const auto texts = [&](const char* name, std::string LegendText::*part) {
    return o.scale_choices ? on_every_scale(name, [&](HeatScale s) { return html_escape(legend_text(m, several, s).*part); })
                           : std::string();
  };
  std::string out = "<g class=\"legend\" data-min=\"" + exact_number(static_cast<float>(several ? m.step_min : m.min)) +
                    "\" data-max=\"" + exact_number(static_cast<float>(several ? m.step_max : m.max)) + "\" data-scale=\"" +
                    scale_name(o.scale) + "\">\n";
  double x = 12.0;
  out += "<text class=\"lo\" x=\"" + num(x) + "\" y=\"" + num(top + 11.0) + "\" data-at=\"0\"" + texts("text", &LegendText::low) +
         ">" + html_escape(shown.low) + "</text>\n";
  x += static_cast<double>(ends) * kCharWidth + 8.0;
  for (int k = 0; k < 24; ++k) {
    const double at = k / 23.0;
    out += "<rect class=\"swatch\" x=\"" + num(x) + "\" y=\"" + num(top) + "\" width=\"10\" height=\"14\" fill=\"" +
           palette_hex(at, diverging) + "\" data-at=\"" + num(at * 100) + "%\"" +
           (o.scale_choices ? on_every_scale("fill", [&](HeatScale s) { return palette_hex(at, m.diverging(s)); }) : "") + "/>\n";
    x += 10.0;
  }
  x += 8.0;
  out += "<text class=\"hi\" x=\"" + num(x) + "\" y=\"" + num(top + 11.0) + "\"" + texts("text", &LegendText::high) + ">" +
         html_escape(shown.high) + "</text>\n";
  x += static_cast<double>(ends) * kCharWidth + 20.0;
  if (causal) {
    out += "<rect class=\"swatch-masked\" x=\"" + num(x) + "\" y=\"" + num(top) + "\" width=\"14\" height=\"14\" fill=\"url(#" +
           hatch + ")\"/>\n";
    out += "<text x=\"" + num(x + 20.0) + "\" y=\"" + num(top + 11.0) + "\">" + html_escape(masked_words) + "</text>\n";
  }
  out += "<text class=\"scale-words\" x=\"12\" y=\"" + num(top + 31.0) + "\"" + texts("text", &LegendText::words) + ">" +
         html_escape(shown.words) + "</text>\n";
  return out + "</g>\n";
}

// The masked cells' pattern, as `id`.
std::string hatch_pattern(const std::string& id) {
  return "<defs><pattern id=\"" + id +
         "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
         "<rect width=\"6\" height=\"6\" fill=\"#d9d9d9\"/><rect width=\"2.5\" height=\"6\" fill=\"#7a7a7a\"/></pattern></defs>\n";
}

}  // namespace

Figure svg_heatmap(const HeatMap& m, const FigureOptions& o) {
  const bool numbers = m.keys <= kHeatmapMaxTokens;
  const double cell = numbers ? 54.0 : std::clamp(720.0 / static_cast<double>(m.keys), 9.0, 24.0);
  const std::size_t label_columns = numbers ? 12 : 8;
  std::size_t widest = 1;
  for (const std::string& l : m.labels) widest = std::max(widest, display_width(clip_label(l, label_columns)));
  const double label_width = static_cast<double>(widest) * kCharWidth;
  const double title_height = o.standalone ? 30.0 : 0.0;
  // The axes' names go in the corner above the query labels and left of the key labels: room for both.
  const std::string across = m.words.page(m.of_tokens ? "keys_axis" : "columns_axis") + " \xe2\x86\x92";  // "keys →"
  const std::string down = m.words.page(m.of_tokens ? "queries_axis" : "rows_axis") + " \xe2\x86\x93";   // "queries ↓"
  const double left =
      12.0 + std::max({label_width, 9 * kCharWidth, static_cast<double>(std::max(display_width(across), display_width(down))) * kCharWidth}) + 8.0;
  // The caption's line (a map of a grid has none: room for the axes' names only), then the key labels.
  const double grid_top = title_height + (o.in_grid ? 8.0 : 22.0) + std::max(label_width * 0.72, 30.0) + 12.0;
  const double grid_width = static_cast<double>(m.keys) * cell, grid_height = static_cast<double>(m.rows) * cell;
  const double legend_top = grid_top + grid_height + 16.0;
  const std::string hatch = o.uid + "-masked";
  double legend_width = 0.0;
  const std::string legend = o.in_grid ? "" : legend_group(m, false, m.causal, o, legend_top, hatch, legend_width);
  const double caption_width = o.in_grid ? 0.0 : static_cast<double>(display_width(m.caption)) * kCharWidth;  // the line above the grid
  const double width = std::max({left + grid_width + label_width * 0.72 + 12.0, legend_width, 24.0 + caption_width});
  const double height = o.in_grid ? grid_top + grid_height + 4.0 : legend_top + 48.0;

  std::string out = svg_open(width, height, o, m.words.screen("heatmap", {{"caption", m.caption}}));
  out += hatch_pattern(hatch);
  if (!o.in_grid)
    out += "<text class=\"caption\" x=\"12\" y=\"" + num(title_height + 15.0) + "\">" + html_escape(m.caption) + "</text>\n";
  out += "<text class=\"axis\" x=\"" + num(left - 8.0) + "\" y=\"" + num(grid_top - 22.0) +
         "\" text-anchor=\"end\" font-style=\"italic\">" + across + "</text>\n";
  out += "<text class=\"axis\" x=\"" + num(left - 8.0) + "\" y=\"" + num(grid_top - 8.0) +
         "\" text-anchor=\"end\" font-style=\"italic\">" + down + "</text>\n";
  // Key labels along the top, slanted; query labels on the left.
  for (std::size_t j = 0; j < m.keys; ++j) {
    const double x = left + (static_cast<double>(j) + 0.5) * cell;
    out += "<text class=\"key\" transform=\"translate(" + num(x) + "," + num(grid_top - 6.0) +
           ") rotate(-45)\">" + html_escape(clip_label(m.labels[j], label_columns)) + "</text>\n";
  }
  for (std::size_t i = 0; i < m.rows; ++i) {
    const double y = grid_top + (static_cast<double>(i) + 0.5) * cell;
    out += "<text class=\"query\" x=\"" + num(left - 8.0) + "\" y=\"" + num(y) +
           "\" text-anchor=\"end\" dominant-baseline=\"central\">" +
           html_escape(clip_label(m.labels[m.first + i], label_columns)) + "</text>\n";
  }
  // The cells: one focus stop per map (the first cell); the arrow keys move between cells (html.cpp's script).
  out += "<g class=\"cells\" data-box=\"" + num(left) + " " + num(grid_top) + " " + num(grid_width) + " " + num(grid_height) + "\">\n";
  for (std::size_t i = 0; i < m.rows; ++i) {
    for (std::size_t j = 0; j < m.keys; ++j) {
      const float v = m.at(i, j);
      const double x = left + static_cast<double>(j) * cell, y = grid_top + static_cast<double>(i) * cell;
      const bool masked = m.masked(i, j);
      const double shade = m.shade(i, j, o.scale);
      const bool diverging = m.diverging(o.scale);
      std::string fill, value, choices, ink_choices;
      if (masked) {
        fill = "url(#" + hatch + ")";
        value = "masked";
      } else {
        fill = std::isnan(shade) ? "none" : palette_hex(shade, diverging);
        value = exact_number(v);
        if (o.scale_choices && !std::isnan(shade)) {
          choices = on_every_scale("fill", [&](HeatScale s) { return palette_hex(m.shade(i, j, s), m.diverging(s)); });
          ink_choices = on_every_scale("fill", [&](HeatScale s) { return ink(m.shade(i, j, s), m.diverging(s)); });
        }
      }
      const std::string label = pair_text(m, i, j) + ": " + (masked ? m.words.page("masked_key") : value);
      out += "<rect class=\"cell\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(cell) + "\" height=\"" +
             num(cell) + "\" fill=\"" + fill + "\"" + choices + (std::isnan(shade) && !masked ? " stroke=\"#888888\"" : "") +
             " data-q=\"" + std::to_string(m.first + i) + "\" data-k=\"" + std::to_string(j) + "\" data-value=\"" + value +
             "\"" + (o.standalone ? "" : (i == 0 && j == 0 ? " tabindex=\"0\"" : " tabindex=\"-1\"")) +
             " aria-label=\"" + html_escape(label) + "\"><title>" + html_escape(label) + "</title></rect>\n";
      if (numbers && !masked) {
        out += "<text class=\"v\" x=\"" + num(x + cell / 2) + "\" y=\"" + num(y + cell / 2) +
               "\" text-anchor=\"middle\" dominant-baseline=\"central\" pointer-events=\"none\" aria-hidden=\"true\"" +
               (std::isnan(shade) ? "" : " fill=\"" + ink(shade, diverging) + "\"") + ink_choices + ">" + cell_text(v) +
               "</text>\n";
      }
    }
  }
  out += "</g>\n" + legend + "</svg>\n";
  return {out, width, height};
}

Figure svg_legend(const std::vector<HeatMap>& maps, const FigureOptions& o) {
  if (maps.empty()) return {};
  double width = 0.0;
  const std::string hatch = o.uid + "-masked";
  const bool causal = std::any_of(maps.begin(), maps.end(), [](const HeatMap& m) { return m.causal; });
  const std::string legend = legend_group(maps.front(), maps.size() > 1, causal, o, 4.0, hatch, width);
  return {svg_open(width, 48.0, o, maps.front().words.page("colour_key")) + hatch_pattern(hatch) + legend + "</svg>\n",
          width, 48.0};
}

bool table_drawable(const std::vector<std::size_t>& shape) {
  if (shape.empty() || shape.size() > 2) return false;
  const std::size_t rows = shape.size() == 2 ? shape[0] : 1, cols = shape.back();
  return rows >= 1 && cols >= 1 && rows <= kTableMax && cols <= kTableMax;
}

std::string svg_table(const Step& step, const std::vector<std::string>& tokens, const FigureOptions& o) {
  const AnyTensor& t = step.tensor;
  const std::size_t rows = t.dimension() == 2 ? t.shape()[0] : 1, cols = t.shape().back();
  const bool by_token = t.dimension() == 2 && rows == tokens.size();
  std::vector<std::string> texts;
  std::size_t widest = 1;
  for (std::size_t k = 0; k < rows * cols; ++k) {
    texts.push_back(step.integer ? std::to_string(static_cast<long long>(t.data()[k])) : cell_text(t.data()[k]));
    widest = std::max(widest, texts.back().size());
  }
  std::size_t label_chars = 1;
  for (std::size_t i = 0; i < rows; ++i)
    label_chars = std::max(label_chars, display_width(by_token ? clip_label(token_repr(tokens[i]), 12) : std::to_string(i)));
  const double cell_w = static_cast<double>(widest) * kCharWidth + 16.0, cell_h = 26.0;
  const double title_height = o.standalone ? 30.0 : 0.0;
  const double left = 12.0 + static_cast<double>(label_chars) * kCharWidth + 10.0, top = title_height + 24.0;
  const double width = std::max(left + static_cast<double>(cols) * cell_w + 12.0, 12.0 + 60 * kCharWidth);
  const double height = top + static_cast<double>(rows) * cell_h + 30.0;
  std::string out = svg_open(width, height, o, "table: " + step.id);
  for (std::size_t j = 0; j < cols; ++j)
    out += "<text class=\"key\" x=\"" + num(left + (static_cast<double>(j) + 0.5) * cell_w) + "\" y=\"" + num(top - 8.0) +
           "\" text-anchor=\"middle\" fill=\"#666666\">" + std::to_string(j) + "</text>\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const double y = top + static_cast<double>(i) * cell_h;
    const std::string label = by_token ? clip_label(token_repr(tokens[i]), 12) : std::to_string(i);
    out += "<text class=\"query\" x=\"" + num(left - 8.0) + "\" y=\"" + num(y + cell_h / 2) +
           "\" text-anchor=\"end\" dominant-baseline=\"central\">" + html_escape(label) + "</text>\n";
    for (std::size_t j = 0; j < cols; ++j) {
      const double x = left + static_cast<double>(j) * cell_w;
      const std::string value = exact_number(t.data()[i * cols + j]);
      out += "<rect class=\"cell\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(cell_w) + "\" height=\"" +
             num(cell_h) + "\" fill=\"#ffffff\" stroke=\"#b0b0b0\" data-value=\"" + value + "\" aria-label=\"[" +
             std::to_string(i) + ", " + std::to_string(j) + "]: " + value + "\"/>\n";
      out += "<text class=\"v\" x=\"" + num(x + cell_w - 8.0) + "\" y=\"" + num(y + cell_h / 2) +
             "\" text-anchor=\"end\" dominant-baseline=\"central\" fill=\"#1a1a1a\">" + texts[i * cols + j] + "</text>\n";
    }
  }
  out += "<text class=\"caption\" x=\"12\" y=\"" + num(height - 10.0) + "\" fill=\"#666666\">" +
         html_escape(o.words.page("shape", {{"shape", shape_tuple(step.shape)}}) +
                     (by_token ? o.words.page("rows_are_tokens") : "")) +
         "</text>\n</svg>\n";
  return out;
}

}  // namespace attn

namespace attn {

Figure svg_small_map(const HeatMap& m, const FigureOptions& o) {
  const double cell = std::clamp(96.0 / static_cast<double>(std::max(m.keys, m.rows)), 2.0, 16.0);
  const double grid_width = static_cast<double>(m.keys) * cell, grid_height = static_cast<double>(m.rows) * cell;
  const double width = std::max(grid_width, 96.0) + 8.0, height = grid_height + 8.0;
  std::string out = svg_open(width, height, o, m.note.empty() ? m.caption : m.caption + ": " + m.note);
  out += "<g class=\"cells small\">\n";
  for (std::size_t i = 0; i < m.rows; ++i)
    for (std::size_t j = 0; j < m.keys; ++j) {
      const double shade = m.shade(i, j, o.scale);
      const std::string fill = m.masked(i, j) ? "#d9d9d9" : std::isnan(shade) ? "none" : palette_hex(shade, m.diverging(o.scale));
      out += "<rect x=\"" + num(4.0 + static_cast<double>(j) * cell) + "\" y=\"" + num(4.0 + static_cast<double>(i) * cell) +
             "\" width=\"" + num(cell) + "\" height=\"" + num(cell) + "\" fill=\"" + fill + "\"/>\n";
    }
  out += "</g>\n";
  return {out + "</svg>\n", width, height};
}

Figure svg_scale_key(const HeatMap& m, const FigureOptions& o) {
  const std::string lo = m.low_end(o.scale), hi = m.high_end(o.scale);
  const auto say = [&](const char* name, const TextValues& values = {}) { return m.words.page(name, values); };
  const std::string words = say("colours", {{"words", o.scale == HeatScale::Row      ? say("key_row")
                                                      : o.scale == HeatScale::Matrix ? say("key_matrix")
                                                      : m.diverging(o.scale)         ? say("key_signed")
                                                                                     : say("key_fixed", {{"low", lo}, {"high", hi}})}});
  const double swatches = 24 * 8.0;
  const double width = std::max(12.0 + static_cast<double>(display_width(lo) + display_width(hi)) * kCharWidth + 16.0 + swatches,
                                12.0 + static_cast<double>(display_width(words)) * kCharWidth) + 12.0;
  std::string out = svg_open(width, 44.0, o, say("colour_key"));
  out += "<g class=\"legend\">\n<text x=\"4\" y=\"13\">" + html_escape(lo) + "</text>\n";
  double x = 4.0 + static_cast<double>(display_width(lo)) * kCharWidth + 8.0;
  for (int k = 0; k < 24; ++k, x += 8.0)
    out += "<rect class=\"swatch\" x=\"" + num(x) + "\" y=\"2\" width=\"8\" height=\"14\" fill=\"" +
           palette_hex(k / 23.0, m.diverging(o.scale)) + "\"/>\n";
  out += "<text x=\"" + num(x + 8.0) + "\" y=\"13\">" + html_escape(hi) + "</text>\n";
  out += "<text x=\"4\" y=\"36\">" + html_escape(words) + "</text>\n</g>\n";
  return {out + "</svg>\n", width, 44.0};
}

std::size_t grid_columns(std::size_t n, double width, double height) {
  const double gap = 16.0, box_width = 1600.0, box_height = 900.0;
  std::size_t best = 1;
  double largest = 0.0;
  for (std::size_t c = 1; c <= std::max<std::size_t>(n, 1); ++c) {
    const std::size_t r = (n + c - 1) / c;
    const double scale = std::min((box_width - gap * static_cast<double>(c - 1)) / (static_cast<double>(c) * width),
                                  (box_height - gap * static_cast<double>(r - 1)) / (static_cast<double>(r) * height));
    if (scale > largest * 1.001) largest = scale, best = c;  // a tie: fewer columns, the fuller grid
  }
  return best;
}

}  // namespace attn

namespace attn {

std::string head_colour(std::size_t h) {
  static const char* const kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kColours[h % 10];
}

Figure svg_lines(const std::vector<HeatMap>& maps, const FigureOptions& o) {
  if (maps.empty() || !maps.front().of_tokens) return {};
  const HeatMap& first = maps.front();
  const std::size_t label_columns = 14;
  std::size_t widest = 1;
  for (const std::string& l : first.labels) widest = std::max(widest, display_width(clip_label(l, label_columns)));
  const double label_width = static_cast<double>(widest) * kCharWidth, row = 24.0;
  const double title_height = o.standalone ? 30.0 : 0.0;
  const double top = title_height + 34.0;
  const double left_x = 12.0 + label_width, right_x = left_x + 16.0 + 240.0 + 16.0;
  const double width = right_x + label_width + 12.0;
  const std::size_t tall = std::max(first.rows, first.keys);
  const double height = top + static_cast<double>(tall) * row + 10.0;
  const auto y_of = [&](std::size_t k) { return top + (static_cast<double>(k) + 0.5) * row; };
  const auto say = [&](const char* name, const TextValues& values = {}) { return first.words.page(name, values); };
  std::string out = svg_open(width, height, o, say("lines_label", {{"caption", first.caption}}));
  out += "<text class=\"axis\" x=\"" + num(left_x) + "\" y=\"" + num(top - 14.0) +
         "\" text-anchor=\"end\" font-style=\"italic\">" + html_escape(say("queries_axis")) + "</text>\n";
  out += "<text class=\"axis\" x=\"" + num(right_x) + "\" y=\"" + num(top - 14.0) + "\" font-style=\"italic\">" +
         html_escape(say("keys_axis")) + "</text>\n";
  for (std::size_t h = 0; h < maps.size(); ++h) {
    check_cancelled();  // attn serve's time limit and stop (core/cancel.hpp): a head's lines at most apart
    const HeatMap& m = maps[h];
    out += "<g class=\"head-lines\" data-head=\"" + std::to_string(h) + "\" stroke=\"" + head_colour(h) +
           "\" stroke-width=\"3\">\n";
    for (std::size_t i = 0; i < m.rows; ++i)
      for (std::size_t j = 0; j < m.keys; ++j) {
        const float v = m.at(i, j);
        if (m.masked(i, j) || !std::isfinite(v)) continue;
        // Its place on the fixed scale: the weight itself for probabilities (scores: centred on 0; past 1: of the max).
        const double opacity = m.shade(i, j, HeatScale::Fixed);
        char op[16];
        std::snprintf(op, sizeof op, "%.3f", opacity);
        out += "<line x1=\"" + num(left_x + 6.0) + "\" y1=\"" + num(y_of(i)) + "\" x2=\"" + num(right_x - 6.0) + "\" y2=\"" +
               num(y_of(j)) + "\" stroke-opacity=\"" + op + "\" vector-effect=\"non-scaling-stroke\" data-head=\"" + std::to_string(h) + "\" data-q=\"" +
               std::to_string(m.first + i) + "\" data-k=\"" + std::to_string(j) + "\" data-value=\"" + exact_number(v) +
               "\"/>\n";
      }
    out += "</g>\n";
  }
  // The tokens: one focus stop per column (the first token); the arrow keys move (html.cpp's script).
  for (std::size_t i = 0; i < first.rows; ++i)
    out += "<text class=\"tok q\" x=\"" + num(left_x) + "\" y=\"" + num(y_of(i)) +
           "\" text-anchor=\"end\" dominant-baseline=\"central\" data-q=\"" + std::to_string(first.first + i) + "\"" +
           (o.standalone ? "" : i == 0 ? " tabindex=\"0\"" : " tabindex=\"-1\"") + " aria-label=\"" +
           html_escape(say("query_label", {{"q", position_label(first, first.first + i)}})) + "\">" + html_escape(clip_label(first.labels[first.first + i], label_columns)) +
           "</text>\n";
  for (std::size_t j = 0; j < first.keys; ++j)
    out += "<text class=\"tok k\" x=\"" + num(right_x) + "\" y=\"" + num(y_of(j)) + "\" dominant-baseline=\"central\" data-k=\"" +
           std::to_string(j) + "\"" + (o.standalone ? "" : j == 0 ? " tabindex=\"0\"" : " tabindex=\"-1\"") + " aria-label=\"" +
           html_escape(say("key_label", {{"k", position_label(first, j)}})) + "\">" + html_escape(clip_label(first.labels[j], label_columns)) + "</text>\n";
  return {out + "</svg>\n", width, height};
}

}  // namespace attn
