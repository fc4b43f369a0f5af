#include "render/layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "render/heatmap.hpp"
#include "text/words.hpp"
#include "render/torch_print.hpp"

namespace attn {

namespace {

const char* const kDot = "\xc2\xb7";  // "·": a masked (future) cell
// Block shades for cells without colour, lightest to darkest: the value's place from min to max.
const char* const kShades[] = {" ", "\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93", "\xe2\x96\x88"};  // " ░▒▓█"

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

std::string pad_left(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

// Splits a word wider than `width` columns into pieces that fit (between grapheme clusters).
std::vector<std::string> split_wide(std::string word, std::size_t width) {
  std::vector<std::string> pieces;
  width = std::max<std::size_t>(width, 1);
  while (display_width(word) > width) {
    std::string head = clip_to_width(word, width);
    if (head.empty()) head = word.substr(0, 1);  // a character wider than the screen: one byte at a time
    pieces.push_back(head);
    word.erase(0, head.size());
  }
  if (!word.empty()) pieces.push_back(word);
  return pieces;
}

// Words (split at spaces) laid into lines of `width` columns; the first line starts with `first`, the
// others with `rest`.
std::vector<std::string> fill_lines(const std::vector<std::string>& words, std::size_t width, const std::string& first,
                                    const std::string& rest) {
  std::vector<std::string> lines;
  std::string line = first;
  bool empty = first.empty() || first.back() == ' ';  // a first line that starts with a label: a space after it
  // A word wider than a line is split to fit the wider of the two indents (a piece may start either).
  const std::size_t indent = std::max(display_width(first), display_width(rest));
  const std::size_t room = width > indent ? width - indent : 1;
  for (const std::string& word : words) {
    for (const std::string& piece : split_wide(word, room)) {
      if (!empty && display_width(line) + 1 + display_width(piece) > width) {
        lines.push_back(line);
        line = rest;
        empty = true;
      }
      line += (empty ? "" : " ") + piece;
      empty = false;
    }
  }
  if (!empty || lines.empty()) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

std::string shade_block(double x) {
  return kShades[std::min<std::size_t>(4, static_cast<std::size_t>(std::lround(x * 4)))];
}

Span cell(const HeatMap& m, HeatScale scale, std::size_t i, std::size_t j, std::size_t width, bool color,
          const std::string& text = "") {
  if (m.masked(i, j)) return {pad_right(pad_left(kDot, (width + 1) / 2), width), Role::Masked};
  const float v = m.at(i, j);
  if (!std::isfinite(v)) return {pad_left(text.empty() ? std::string(std::isnan(v) ? "?" : "!") : text, width), Role::Off};
  const double x = m.shade(i, j, scale);
  const bool diverging = m.diverging(scale);
  if (!text.empty()) return {pad_left(text, width), Role::Cell, x, diverging};
  if (color) return {std::string(width, ' '), Role::Cell, x, diverging};
  return {repeat(shade_block(x), width), Role::Cell, x, diverging};
}

// The legend states the scale, as pieces that are kept whole when the legend wraps. In colour, a ramp of
// the palette between the scale's two ends; without colour, cells with numbers are not shaded, so there is
// no ramp, and shaded cells get only the shades they use, each with the part of the scale it stands for.
std::vector<Line> legend_pieces(const HeatMap& m, const LayoutOptions& o, bool shaded, bool off_marks) {
  const bool diverging = m.diverging(o.scale);
  const auto say = [&](const char* name, const TextValues& values = {}) { return o.words.screen(name, values); };
  std::vector<Line> pieces{{{say("colours"), Role::Legend}}};
  if (o.color) {
    Line ramp{{m.low_end(o.scale) + " ", Role::Legend}};
    for (int k = 0; k < 8; ++k) ramp.push_back(Span{"  ", Role::Cell, k / 7.0, diverging});
    ramp.push_back({" " + m.high_end(o.scale) + ",", Role::Legend});
    pieces.push_back(ramp);
  } else {
    if (shaded) {
      bool used[5] = {};
      for (std::size_t i = 0; i < m.rows; ++i)
        for (std::size_t j = 0; j < m.keys; ++j) {
          const double x = m.shade(i, j, o.scale);
          if (!std::isnan(x)) used[std::min<std::size_t>(4, static_cast<std::size_t>(std::lround(x * 4)))] = true;
        }
      const char* const kWords[] = {"shade_lowest", "shade_low", "shade_middle", "shade_high", "shade_highest"};
      for (std::size_t k = 0; k < 5; ++k)
        if (used[k])
          pieces.push_back({{repeat(kShades[k], 2), Role::Cell, k / 4.0, diverging}, {" " + say(kWords[k]), Role::Legend}});
    }
    pieces.push_back({{say(shaded ? "of_range" : "range", {{"low", m.low_end(o.scale)}, {"high", m.high_end(o.scale)}}),
                       Role::Legend}});
  }
  pieces.push_back({{m.scale_words(o.scale), Role::Legend}});
  if (m.causal) pieces.push_back({{std::string(kDot), Role::Masked}, {" " + say("masked"), Role::Legend}});
  if (off_marks) pieces.push_back({{"? nan  ! inf", Role::Legend}});
  return pieces;
}

// The legend's pieces on as few lines of `o.width` as they fit, each line starting with two spaces; the
// scale's words wrap between words when they are wider than a line.
void add_legend(const HeatMap& m, const LayoutOptions& o, bool shaded, bool off_marks, std::vector<Line>& out) {
  Line line{{" ", Role::Text}};
  for (Line& piece : legend_pieces(m, o, shaded, off_marks)) {
    if (line.size() > 1 && line_width(line) + 1 + line_width(piece) > o.width) {
      out.push_back(std::move(line));
      line = {{" ", Role::Text}};
    }
    if (line.size() == 1 && 2 + line_width(piece) > o.width && piece.size() == 1) {  // words wider than a line
      for (auto& l : wrap_text(piece.front().text, o.width, "  ", Role::Legend)) out.push_back(std::move(l));
      continue;
    }
    line.push_back({" ", Role::Text});
    for (Span& sp : piece) line.push_back(std::move(sp));
  }
  if (line.size() > 1) out.push_back(std::move(line));
}


// Every number, row by row: "  3 'with':  0:0.1385  1:0.2379 ...", wrapped between numbers.
void number_rows(const HeatMap& a, std::size_t width, std::vector<Line>& out) {
  const std::vector<std::string>& labels = a.labels;
  for (std::size_t i = 0; i < a.rows; ++i) {
    std::vector<std::string> items;
    for (std::size_t j = 0; j < a.keys; ++j) {
      char buf[48];
      if (a.masked(i, j)) {
        std::snprintf(buf, sizeof buf, "%zu:masked", j);
      } else {
        std::snprintf(buf, sizeof buf, "%zu:%.4f", j, static_cast<double>(a.at(i, j)));
      }
      items.push_back(buf);
    }
    const std::string head = "  " + std::to_string(a.first + i) + " " + labels[a.first + i] + ":";
    for (const auto& line : fill_lines(items, width, head, "      ")) out.push_back({{line, Role::Tensor}});
  }
}

// Each query's strongest keys, for matrices too large to draw.
void summary_rows(const HeatMap& a, std::size_t width, std::vector<Line>& out) {
  const std::vector<std::string>& labels = a.labels;
  for (std::size_t i = 0; i < a.rows; ++i) {
    std::vector<std::size_t> order;
    for (std::size_t j = 0; j < a.keys; ++j)
      if (!a.masked(i, j)) order.push_back(j);
    const std::size_t top = std::min<std::size_t>(3, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                      [&](std::size_t x, std::size_t y) {
                        const float vx = a.at(i, x), vy = a.at(i, y);
                        if (std::isnan(vx) != std::isnan(vy)) return std::isnan(vy);
                        return vx > vy;
                      });
    std::vector<std::string> items{"->"};
    for (std::size_t k = 0; k < top; ++k)
      items.push_back(std::to_string(order[k]) + " " + labels[order[k]] + " " +
                      heat_number(a.at(i, order[k])) + (k + 1 < top ? "," : ""));
    const std::string head = "  " + std::to_string(a.first + i) + " " + labels[a.first + i];
    for (const auto& line : fill_lines(items, width, head, "      ")) out.push_back({{line, Role::Tensor}});
  }
}

std::size_t digits(std::size_t n) { return std::to_string(n).size(); }

// The labels a grid of colour-only cells abbreviates, listed once under it after the screen's word `heading`
// ("keys", "tokens", "positions"): "  keys: 0='The' 1='␣cat' ...", wrapped between labels.
void label_list(const HeatMap& m, const char* heading, const LayoutOptions& o, std::vector<Line>& out) {
  std::vector<std::string> labels;
  for (std::size_t j = 0; j < m.keys; ++j) labels.push_back(std::to_string(j) + "=" + m.labels[j]);
  for (const auto& line : fill_lines(labels, o.width, "  " + o.words.screen(heading), "        "))
    out.push_back({{line, Role::Label}});
}

// How a map is drawn at `width` columns: every number in its cell, colour-only cells of `cell` columns, or a
// summary of each query's strongest keys; `grid` is the width of its rows of cells (the whole width for a
// summary).
struct Form {
  enum Kind { Numbers, Colour, Summary } kind;
  std::size_t cell = 0, grid = 0;
};
constexpr std::size_t kNumberLabel = 10, kNumberCell = 6;  // a row label: 'journey' and '␣journey' whole
Form form_of(const HeatMap& a, std::size_t width) {
  if (a.keys <= kHeatmapMaxTokens && 2 + kNumberLabel + kNumberCell * a.keys <= width)
    return {Form::Numbers, kNumberCell - 1, 2 + kNumberLabel + kNumberCell * a.keys};
  const std::size_t label = 2 + digits(a.keys - 1) + 1 + 6 + 1;
  const std::size_t cell = a.keys <= kCompactMaxTokens && width > label ? std::min<std::size_t>(3, (width - label) / a.keys) : 0;
  if (cell == 0) return {Form::Summary, 0, width};
  return {Form::Colour, cell, label + cell * a.keys};
}

// `selected`: the map is the head selected among a step's heads (LayoutOptions::selected), its caption marked.
void one_map(const HeatMap& a, const LayoutOptions& o, std::vector<Line>& out, bool selected = false) {
  const std::vector<std::string>& labels = a.labels;
  for (const auto& line : fill_lines(words_of(o.words.screen("heatmap", {{"caption", a.caption}})), o.width, "  ", "  "))
    out.push_back({{line, selected ? Role::Selected : Role::Legend}});
  bool off = false;
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.keys; ++j) off = off || (!a.masked(i, j) && !std::isfinite(a.at(i, j)));
  if (o.numbers) {
    out.push_back({{"  " + o.words.screen("every_number"), Role::Legend}});
    number_rows(a, o.width, out);
    return;
  }
  const Form form = form_of(a, o.width);
  constexpr std::size_t kLabel = kNumberLabel, kCell = kNumberCell;
  if (form.kind == Form::Numbers) {  // every number in its cell
    add_legend(a, o, false, false, out);
    for (const std::string& head : key_label_lines({labels.begin(), labels.begin() + a.keys}, kLabel + 2, kCell))
      out.push_back({{head, Role::Label}});
    for (std::size_t i = 0; i < a.rows; ++i) {
      Line row{{"  " + pad_left(clip_label(labels[a.first + i], kLabel), kLabel), Role::Label}};
      for (std::size_t j = 0; j < a.keys; ++j) {
        row.push_back({" ", Role::Text});
        const float v = a.at(i, j);
        const std::string text = a.masked(i, j) ? std::string()
                                 : std::isfinite(v) ? heat_number(v)
                                                    : std::string(std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
        row.push_back(cell(a, o.scale, i, j, kCell - 1, o.color, text));
      }
      out.push_back(row);
    }
    return;
  }
  // Colour-only cells: rows labelled by position and clipped token, columns by position.
  const std::size_t index_width = digits(a.keys - 1);
  const std::size_t label = 2 + index_width + 1 + 6 + 1;
  const std::size_t cell_width = form.cell;
  if (form.kind == Form::Summary) {
    const std::string heading = o.words.screen("too_many_keys",
                                      {{"n", std::to_string(a.keys)}, {"width", std::to_string(o.width)}});
    for (const auto& line : fill_lines(words_of(heading), o.width, "  ", "  ")) out.push_back({{line, Role::Legend}});
    summary_rows(a, o.width, out);
    if (!o.numbers_hint.empty()) out.push_back({{"  " + o.numbers_hint, Role::Legend}});
    return;
  }
  add_legend(a, o, true, off, out);
  // Column numbers, one digit per line, in each cell's last column.
  for (std::size_t d = index_width; d-- > 0;) {
    std::string digits_line(label, ' ');
    for (std::size_t j = 0; j < a.keys; ++j) {
      const std::string n = std::to_string(j);
      const std::size_t from_right = d;  // 0: ones
      const char c = from_right < n.size() ? n[n.size() - 1 - from_right] : ' ';
      digits_line += std::string(cell_width - 1, ' ') + c;
    }
    out.push_back({{digits_line, Role::Label}});
  }
  for (std::size_t i = 0; i < a.rows; ++i) {
    const std::size_t q = a.first + i;
    Line row{{"  " + pad_left(std::to_string(q), index_width) + " " + pad_right(clip_label(labels[q], 6), 6) + " ",
              Role::Label}};
    for (std::size_t j = 0; j < a.keys; ++j) row.push_back(cell(a, o.scale, i, j, cell_width, o.color));
    out.push_back(row);
  }
  label_list(a, "keys", o, out);  // the labels the grid abbreviates
  if (!o.numbers_hint.empty()) out.push_back({{"  " + o.numbers_hint, Role::Legend}});
}

}  // namespace

std::vector<std::string> prompt_lines(const std::string& code) {
  std::istringstream lines(code);
  std::string line;
  std::vector<std::string> out;
  bool first = true;
  while (std::getline(lines, line)) {
    const std::string marker = first ? "  >>>" : "  ...";
    out.push_back(line.empty() ? marker : marker + " " + visible(line));
    first = false;
  }
  return out;
}

std::string shape_text(const Step& s, const Words& words) {
  return s.python_float ? "  " + words.screen("python_float")
         : s.python_int ? "  " + words.screen("python_int")
                        : "  " + words.screen("shape", {{"size", torch_size(s.tensor)}});
}

std::string value_text(const Step& s) {
  return s.python_float ? py_float(*s.python_float)
         : s.python_int ? std::to_string(*s.python_int)
                        : torch_str(s.tensor, s.integer);
}

std::vector<Line> wrap_text(const std::string& text, std::size_t width, const std::string& indent, Role role) {
  std::vector<Line> out;
  for (const auto& line : fill_lines(words_of(visible(text)), width, indent, indent)) out.push_back({{line, role}});
  return out;
}

std::vector<Line> wrap_preformatted(const std::string& line, std::size_t width, Role role, std::size_t hang) {
  if (display_width(line) <= width) return {{{line, role}}};
  const std::size_t lead = line.find_first_not_of(' ');
  const std::string indent = lead == std::string::npos ? std::string() : line.substr(0, lead);
  // A tensor row continues under its first number, as PyTorch's own wrapped rows do; other lines hang.
  std::size_t at = indent.size() + hang;
  if (role == Role::Tensor && lead != std::string::npos) {
    std::size_t first = lead + (line.compare(lead, 7, "tensor(") == 0 ? 7 : 0);
    while (first < line.size() && line[first] == '[') ++first;
    if (first < line.size()) at = first;
  }
  const std::string rest(std::min(at, width / 2), ' ');
  std::vector<Line> out;
  for (const auto& piece : fill_lines(words_of(line), width, indent, rest)) out.push_back({{piece, role}});
  return out;
}

namespace {

// One map as a block of lines at `width` columns: one_map's, and the head's note under it; `selected` as
// one_map's.
std::vector<Line> map_block(const HeatMap& m, const LayoutOptions& o, bool selected = false) {
  std::vector<Line> block;
  one_map(m, o, block, selected);
  if (!m.note.empty())
    for (auto& l : wrap_text(m.note, o.width, "  ", Role::Legend)) block.push_back(std::move(l));
  return block;
}

// Blocks of `column` columns side by side, `per_row` to a row and kHeadGap columns apart; a shorter block is
// followed by empty lines, and a blank line parts two rows of blocks.
constexpr std::size_t kHeadGap = 2;
std::vector<Line> side_by_side(const std::vector<std::vector<Line>>& blocks, std::size_t column, std::size_t per_row) {
  std::vector<Line> out;
  for (std::size_t first = 0; first < blocks.size(); first += per_row) {
    if (first > 0) out.push_back({});
    const std::size_t last = std::min(blocks.size(), first + per_row);
    std::size_t height = 0;
    for (std::size_t b = first; b < last; ++b) height = std::max(height, blocks[b].size());
    for (std::size_t y = 0; y < height; ++y) {
      Line line;
      for (std::size_t b = first; b < last; ++b) {
        const std::size_t at = (b - first) * (column + kHeadGap);  // where this block's column starts
        if (y >= blocks[b].size()) continue;
        const std::size_t filled = line_width(line);
        if (filled < at) line.push_back({std::string(at - filled, ' '), Role::Text});
        for (const Span& s : blocks[b][y]) line.push_back(s);
      }
      out.push_back(std::move(line));
    }
  }
  return out;
}

// Every head of an overview step as one matrix for its legend: the heads' rows one under another, the
// masked cells made NaN (off every scale, as masked cells are), so the legend's range and, in monochrome, its
// shades are those of every head's cells.
HeatMap all_heads(const std::vector<HeatMap>& maps) {
  HeatMap all = maps.front();
  all.rows = 0;
  all.values.clear();
  all.row_lo.clear();
  all.row_span.clear();
  for (const HeatMap& m : maps) {
    for (std::size_t i = 0; i < m.rows; ++i) {
      for (std::size_t j = 0; j < m.keys; ++j)
        all.values.push_back(m.masked(i, j) ? std::numeric_limits<float>::quiet_NaN() : m.at(i, j));
      all.row_lo.push_back(m.row_lo[i]);
      all.row_span.push_back(m.row_span[i]);
    }
    all.rows += m.rows;
  }
  all.min = all.step_min;
  all.max = all.step_max;
  return all;
}

// An overview step (Step::overview: every head of a layer at a glance, bertviz's model view): small
// colour-only maps side by side in rows of heads, "head h" over each and its note (Step::head_notes) under
// it, one legend for them all and the tokens listed once. Empty where a map of one column per key does not
// fit (heatmap_lines then draws the heads one under another, as any step's).
struct OverviewGrid {
  std::size_t cell = 0, column = 0, per_row = 0;  // per_row 0: it does not fit
};
constexpr std::size_t kOverviewIndent = 2;
OverviewGrid overview_grid(const std::vector<HeatMap>& maps, std::size_t width) {
  if (maps.empty() || width < kOverviewIndent + maps.front().keys) return {};
  const std::size_t keys = maps.front().keys;
  const auto column_of = [&](std::size_t cell) { return std::max<std::size_t>(cell * keys, 8); };
  const auto across = [&](std::size_t cell) {
    return std::max<std::size_t>(1, (width - kOverviewIndent + kHeadGap) / (column_of(cell) + kHeadGap));
  };
  // Cells two columns wide (square on most fonts) unless one-column cells need fewer rows of heads.
  const auto rows_of = [&](std::size_t cell) { return (maps.size() + across(cell) - 1) / across(cell); };
  const std::size_t cell = kOverviewIndent + 2 * keys <= width && rows_of(2) <= rows_of(1) ? 2 : 1;
  return {cell, column_of(cell), std::min(maps.size(), across(cell))};
}

// What head `h` of a step of several heads is in the step's value, as the book's code indexes it:
// attn_weights_layer_5[3] (an overview's (heads, T, T): layer 5, head 3), attn_weights[0, 1] (batch 0's head 1
// of a (b, h, T, T)).
std::string head_value(const Step& step, std::size_t h) {
  return step.id + (step.tensor.dimension() == 4 ? "[0, " : "[") + std::to_string(h) + "]";
}

// Under a grid of heads, the line that names the selected one (LayoutOptions::selected): which head of how
// many, and what it is in the step's value; nothing when none is.
void selected_line(const Step& step, std::size_t heads, const LayoutOptions& o, std::vector<Line>& out) {
  if (!o.selected || *o.selected >= heads) return;
  const std::string line = o.words.screen("selected_head",
                                 {{"h", std::to_string(*o.selected)}, {"heads", std::to_string(heads)},
                                  {"value", head_value(step, *o.selected)}});
  for (const auto& l : fill_lines(words_of(line), o.width, "  ", "  ")) out.push_back({{l, Role::Label}});
}

std::vector<Line> overview_lines(const Step& step, const std::vector<HeatMap>& maps, const LayoutOptions& o) {
  const OverviewGrid grid = overview_grid(maps, o.width);
  if (grid.per_row == 0) return {};
  const std::size_t indent = kOverviewIndent, cell_width = grid.cell, column = grid.column, per_row = grid.per_row;
  std::vector<Line> out;
  for (auto& l : wrap_text(o.words.screen("overview"), o.width, "  ", Role::Legend))
    out.push_back(std::move(l));
  bool off = false;
  for (const HeatMap& m : maps)
    for (std::size_t i = 0; i < m.rows; ++i)
      for (std::size_t j = 0; j < m.keys; ++j) off = off || (!m.masked(i, j) && !std::isfinite(m.at(i, j)));
  if (o.scale == HeatScale::Matrix) {  // each head on its own range: no one pair of numbers ends the ramp
    Line l{{"  " + o.words.screen("colours") + " ", Role::Legend}};
    if (o.color)
      for (int k = 0; k < 8; ++k) l.push_back(Span{"  ", Role::Cell, k / 7.0, maps.front().diverging(o.scale)});
    l.push_back({std::string(o.color ? " " : "") + o.words.screen("each_head_scale"), Role::Legend});
    out.push_back(std::move(l));
  } else {
    add_legend(all_heads(maps), o, true, off, out);
  }
  // A head's note under its map only where it differs from the note the layer's heads share most (common_note),
  // which is said once, under the grid, with how many heads share it.
  const CommonNote common = common_note(maps);
  std::vector<std::vector<Line>> blocks;
  for (std::size_t h = 0; h < maps.size(); ++h) {
    const HeatMap& m = maps[h];
    // The selected head's caption across its whole column, in reverse video.
    const std::string caption = clip_to_width(m.caption, column);
    std::vector<Line> block{o.selected == h ? Line{{pad_right(caption, column), Role::Selected}}
                                            : Line{{caption, Role::Label}}};
    for (std::size_t i = 0; i < m.rows; ++i) {
      Line row;
      for (std::size_t j = 0; j < m.keys; ++j) row.push_back(cell(m, o.scale, i, j, cell_width, o.color));
      block.push_back(std::move(row));
    }
    if (common.own(m))
      for (const auto& line : fill_lines(words_of(m.note), column, "", "")) block.push_back({{line, Role::Legend}});
    blocks.push_back(std::move(block));
  }
  for (Line& l : side_by_side(blocks, column, per_row)) {
    if (!l.empty()) l.insert(l.begin(), Span{std::string(indent, ' '), Role::Text});
    out.push_back(std::move(l));
  }
  if (!common.note.empty())  // "8 of 12 heads: spread"
    for (const auto& l : fill_lines(words_of(common.said(maps.size(), o.words)), o.width, "  ", "  "))
      out.push_back({{l, Role::Legend}});
  selected_line(step, maps.size(), o, out);
  label_list(maps.front(), maps.front().of_tokens ? "tokens" : "positions", o, out);
  if (!o.numbers_hint.empty()) out.push_back({{"  " + o.numbers_hint, Role::Legend}});
  return out;
}

// How many of `maps` go across `options.width`: as many as fit at the width their cells need, kHeadGap apart
// (1: one under another; every number listed row by row is one under another too).
std::size_t maps_across(const std::vector<HeatMap>& maps, const LayoutOptions& options) {
  if (options.numbers || options.head || maps.size() < 2) return 1;
  std::size_t grid = 0;
  for (const HeatMap& m : maps) grid = std::max(grid, form_of(m, options.width).grid);
  return std::max<std::size_t>(1, std::min(maps.size(), (options.width + kHeadGap) / (grid + kHeadGap)));
}

}  // namespace

std::size_t heads_across(const Step& step, const std::vector<std::string>& tokens, const LayoutOptions& options) {
  const std::vector<HeatMap> maps = heat_maps(step, tokens, options.words);
  if (step.overview && !options.numbers && !options.head) {
    const OverviewGrid grid = overview_grid(maps, options.width);
    if (grid.per_row > 0) return std::max<std::size_t>(grid.per_row, 2);  // drawn as an overview, never as a stack
  }
  return maps_across(maps, options);
}

std::vector<Line> heatmap_lines(const Step& step, const std::vector<std::string>& tokens, const LayoutOptions& options) {
  std::vector<HeatMap> maps = heat_maps(step, tokens, options.words);
  std::vector<Line> out;
  if (options.head && *options.head < maps.size()) {  // one head enlarged: the whole width, every number
    const HeatMap& m = maps[*options.head];
    out = map_block(m, options);
    if (options.numbers) return out;  // every number, row by row, already
    const Form::Kind form = form_of(m, options.width).kind;
    // The lines view's reading (bertviz draws a line from each query to its keys, as thick as the weight):
    // where each query looks, its strongest keys with their weights, a summary the grid's cells do not give.
    if (form != Form::Summary) {
      for (auto& l : wrap_text(options.words.screen("lines_view"), options.width, "  ", Role::Legend))
        out.push_back(std::move(l));
      summary_rows(m, options.width, out);
    }
    if (form != Form::Numbers) {
      out.push_back({{"  " + options.words.screen("every_number"), Role::Legend}});
      number_rows(m, options.width, out);
    }
    return out;
  }
  if (step.overview && !options.numbers && !maps.empty()) {
    std::vector<Line> overview = overview_lines(step, maps, options);
    if (!overview.empty()) return overview;
  }
  // Several heads side by side where two or more fit across, each at the width its cells need (or wider, as
  // the row shares the screen), wrapping into rows of heads; else one under another, each at the whole width.
  const std::size_t per_row = maps_across(maps, options);
  if (per_row >= 2) {
    LayoutOptions column = options;
    column.width = (options.width - kHeadGap * (per_row - 1)) / per_row;
    column.numbers_hint.clear();  // said once, under the grid
    std::vector<std::vector<Line>> blocks;
    for (std::size_t h = 0; h < maps.size(); ++h) blocks.push_back(map_block(maps[h], column, options.selected == h));
    out = side_by_side(blocks, column.width, per_row);
    selected_line(step, maps.size(), options, out);
    if (!options.numbers_hint.empty() && form_of(maps.front(), column.width).kind != Form::Numbers)
      out.push_back({{"  " + options.numbers_hint, Role::Legend}});
    return out;
  }
  for (std::size_t h = 0; h < maps.size(); ++h) {
    if (!out.empty()) out.push_back({});
    for (auto& l : map_block(maps[h], options, options.selected == h)) out.push_back(std::move(l));
  }
  selected_line(step, maps.size(), options, out);
  return out;
}

SlideText step_slide(const Section& trace, std::size_t index, const LayoutOptions& o) {
  const Step& s = trace.steps[index];
  SlideText slide;
  const std::string number = "[" + std::to_string(index + 1) + "/" + std::to_string(trace.steps.size()) + "] ";
  const std::string title = " -- " + visible(s.title);
  Line first{{number, Role::Text}, {s.id, Role::StepId}};
  if (display_width(number + s.id + title) <= o.width) {
    first.push_back({title, Role::Heading});
    slide.title.push_back(first);
  } else {
    slide.title.push_back(first);
    for (auto& l : wrap_text(s.title, o.width, "  ", Role::Heading)) slide.title.push_back(l);
  }
  if (o.explain) {
    for (auto& l : wrap_text(s.explanation, o.width, "  ", Role::Text)) slide.text.push_back(l);
    slide.text.push_back({});
    for (const auto& code : prompt_lines(s.code))
      for (auto& l : wrap_preformatted(code, o.width, Role::Code, 4)) slide.text.push_back(l);
  }

  slide.tensor.push_back({{shape_text(s, o.words), Role::Tensor}});
  std::istringstream lines(value_text(s));
  std::string line;
  while (std::getline(lines, line))
    for (auto& l : wrap_preformatted(line, o.width, Role::Tensor, 4)) slide.tensor.push_back(l);
  if (s.heatmap) slide.figure = heatmap_lines(s, trace.inputs.tokens, o);
  return slide;
}

SlideText lesson_slide(const Section& trace, std::size_t k, std::size_t n, const LayoutOptions& o) {
  SlideText slide;
  const LessonInfo& info = trace.info;
  for (auto& l : wrap_text(lesson_banner(trace, k, n, o.words), o.width, "", Role::Heading))
    slide.title.push_back(l);
  for (auto& l : wrap_text(info.summary, o.width, "  ", Role::Text)) slide.text.push_back(l);
  slide.text.push_back({});
  if (trace.show_inputs) {
    for (auto& l : wrap_text(inputs_line(trace, o.words, trace.inputs.shown_source()), o.width, "  ", Role::Text))
      slide.text.push_back(l);
    std::vector<std::string> tokens{o.words.screen("tokens")};
    for (const auto& t : trace.inputs.tokens) tokens.push_back(token_repr(t));
    for (const auto& line : fill_lines(tokens, o.width, "  ", "    ")) slide.text.push_back({{line, Role::Label}});
  }
  for (const auto& note : note_lines(trace))
    for (auto& l : wrap_text(note, o.width, "  ", Role::Text)) slide.text.push_back(l);
  for (const auto& m : trace.modules)
    for (auto& l : wrap_preformatted("  " + module_line(m, o.words), o.width, Role::Code, 4))
      slide.text.push_back(l);
  slide.text.push_back({});
  // One numbering everywhere (issue 28): this slide is step 0, the steps are numbered as [k/n] numbers them,
  // also when --step shows only some.
  const std::size_t steps = trace.steps.size();
  const auto say = [&](const char* name, const TextValues& values = {}) { return o.words.screen(name, values); };
  std::string follow = say("step_zero", {{"n", std::to_string(steps)}});
  if (trace.only.empty()) {
    follow += steps == 0 ? say("no_steps") : steps == 1 ? say("one_step") : say("steps_follow", {{"n", std::to_string(steps)}});
  } else {
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < steps; ++i)
      if (trace.shows(trace.steps[i].id)) shown.push_back(std::to_string(i + 1) + " " + trace.steps[i].id);
    std::string list;
    for (std::size_t i = 0; i < shown.size(); ++i) list += (i ? ", " : "") + shown[i];
    follow += say("shown_steps", {{"k", std::to_string(shown.size())}, {"list", list}});
  }
  for (auto& l : wrap_text(follow, o.width, "  ", Role::Text)) slide.text.push_back(l);
  return slide;
}

std::string plain(const Line& line) {
  std::string out;
  for (const auto& s : line) out += s.text;
  return out;
}

std::size_t line_width(const Line& line) { return display_width(plain(line)); }

std::string inputs_line(const Section& trace, const Words& words, const std::string& source) {
  return words.screen("inputs",
               {{"n", std::to_string(trace.inputs.num_tokens())}, {"d", std::to_string(trace.inputs.d_in())}, {"source", source}});
}

std::string module_line(const ModuleInfo& m, const Words& words) {
  return words.screen("module",
               {{"name", m.name}, {"code", m.code}, {"count", words.number(m.num_params)},
                {"p", std::to_string(m.num_params)}});
}

std::string lesson_banner(const Section& trace, std::size_t k, std::size_t n, const Words& words) {
  const LessonInfo& info = trace.info;
  return words.screen("lesson_banner",
               {{"k", std::to_string(k)}, {"n", std::to_string(n)}, {"name", info.name}, {"section", info.section},
                {"title", info.title}});
}

std::vector<std::string> note_lines(const Section& trace) {
  std::vector<std::string> lines;
  const auto table = [&] {
    const NoteTable& tab = *trace.note_table;
    const auto row = [&](const std::vector<std::string>& cells) {
      std::string line = " ";
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::size_t w = c < tab.widths.size() ? tab.widths[c] : 0;
        const std::size_t cell_width = display_width(cells[c]);  // columns: a Russian number's spaces are 2 bytes
        const std::string pad(cell_width < w ? w - cell_width : 0, ' ');
        line += " " + (c == 0 ? cells[c] + pad : pad + cells[c]) + " ";
      }
      line.pop_back();
      return line;
    };
    lines.push_back(row(tab.header));
    for (const auto& r : tab.rows) lines.push_back(row(r));
  };
  for (std::size_t i = 0; i < trace.notes.size(); ++i) {
    if (trace.note_table && trace.note_table->at == i) table();
    lines.push_back(trace.notes[i]);
  }
  if (trace.note_table && trace.note_table->at >= trace.notes.size()) table();
  return lines;
}

}  // namespace attn
