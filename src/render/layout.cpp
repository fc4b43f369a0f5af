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
std::vector<std::string> fill(const std::vector<std::string>& words, std::size_t width, const std::string& first,
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
  std::vector<Line> pieces{{{"colours:", Role::Legend}}};
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
      const char* const kWords[] = {"lowest", "low", "middle", "high", "highest"};
      for (std::size_t k = 0; k < 5; ++k)
        if (used[k])
          pieces.push_back({{repeat(kShades[k], 2), Role::Cell, k / 4.0, diverging}, {std::string(" ") + kWords[k], Role::Legend}});
    }
    pieces.push_back({{(shaded ? "of " : "") + m.low_end(o.scale) + " to " + m.high_end(o.scale) + ",", Role::Legend}});
  }
  pieces.push_back({{m.scale_words(o.scale), Role::Legend}});
  if (m.causal) pieces.push_back({{std::string(kDot), Role::Masked}, {" masked", Role::Legend}});
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

std::string label_of(const std::vector<std::string>& labels, std::size_t i, bool quoted) {
  return quoted ? "'" + labels[i] + "'" : labels[i];
}

// Every number, row by row: "  3 'with':  0:0.1385  1:0.2379 ...", wrapped between numbers.
void number_rows(const HeatMap& a, std::size_t width, std::vector<Line>& out) {
  const std::vector<std::string>& labels = a.labels;
  const bool quoted = a.of_tokens;
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
    const std::string head = "  " + std::to_string(a.first + i) + " " + label_of(labels, a.first + i, quoted) + ":";
    for (const auto& line : fill(items, width, head, "      ")) out.push_back({{line, Role::Tensor}});
  }
}

// Each query's strongest keys, for matrices too large to draw.
void summary_rows(const HeatMap& a, std::size_t width, std::vector<Line>& out) {
  const std::vector<std::string>& labels = a.labels;
  const bool quoted = a.of_tokens;
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
      items.push_back(std::to_string(order[k]) + " " + label_of(labels, order[k], quoted) + " " +
                      heat_number(a.at(i, order[k])) + (k + 1 < top ? "," : ""));
    const std::string head = "  " + std::to_string(a.first + i) + " " + label_of(labels, a.first + i, quoted);
    for (const auto& line : fill(items, width, head, "      ")) out.push_back({{line, Role::Tensor}});
  }
}

std::size_t digits(std::size_t n) { return std::to_string(n).size(); }

void one_map(const HeatMap& a, const LayoutOptions& o, std::vector<Line>& out) {
  const std::vector<std::string>& labels = a.labels;
  const bool quoted = a.of_tokens;
  for (const auto& line : fill(words_of("heatmap: " + a.caption), o.width, "  ", "  ")) out.push_back({{line, Role::Legend}});
  bool off = false;
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.keys; ++j) off = off || (!a.masked(i, j) && !std::isfinite(a.at(i, j)));
  if (o.numbers) {
    out.push_back({{"  every number (row: query, then key:value):", Role::Legend}});
    number_rows(a, o.width, out);
    return;
  }
  constexpr std::size_t kLabel = 8, kCell = 6;
  if (a.keys <= kHeatmapMaxTokens && 2 + kLabel + kCell * a.keys <= o.width) {  // every number in its cell
    add_legend(a, o, false, false, out);
    Line head{{std::string(kLabel + 2, ' '), Role::Text}};
    for (std::size_t j = 0; j < a.keys; ++j) head.push_back({pad_left(clip_to_width(labels[j], kCell - 1), kCell), Role::Label});
    out.push_back(head);
    for (std::size_t i = 0; i < a.rows; ++i) {
      Line row{{"  " + pad_left(clip_to_width(labels[a.first + i], kLabel), kLabel), Role::Label}};
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
  const std::size_t cell_width = a.keys <= kCompactMaxTokens && o.width > label ? std::min<std::size_t>(3, (o.width - label) / a.keys) : 0;
  if (cell_width == 0) {
    for (const auto& line : fill(words_of(std::to_string(a.keys) + " keys do not fit in " + std::to_string(o.width) +
                                          " columns; each query's strongest keys:"),
                                 o.width, "  ", "  "))
      out.push_back({{line, Role::Legend}});
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
    Line row{{"  " + pad_left(std::to_string(q), index_width) + " " + pad_right(clip_to_width(labels[q], 6), 6) + " ",
              Role::Label}};
    for (std::size_t j = 0; j < a.keys; ++j) row.push_back(cell(a, o.scale, i, j, cell_width, o.color));
    out.push_back(row);
  }
  // The labels the grid abbreviates.
  std::vector<std::string> keys;
  for (std::size_t j = 0; j < a.keys; ++j) keys.push_back(std::to_string(j) + "=" + label_of(labels, j, quoted));
  for (const auto& line : fill(keys, o.width, "  keys:", "        ")) out.push_back({{line, Role::Label}});
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

std::string shape_text(const Step& s) {
  return s.python_float ? "  a Python float, not a tensor"
         : s.python_int ? "  a Python int, not a tensor"
                        : "  shape: " + torch_size(s.tensor);
}

std::string value_text(const Step& s) {
  return s.python_float ? py_float(*s.python_float)
         : s.python_int ? std::to_string(*s.python_int)
                        : torch_str(s.tensor, s.integer);
}

std::vector<Line> wrap_text(const std::string& text, std::size_t width, const std::string& indent, Role role) {
  std::vector<Line> out;
  for (const auto& line : fill(words_of(visible(text)), width, indent, indent)) out.push_back({{line, role}});
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
  for (const auto& piece : fill(words_of(line), width, indent, rest)) out.push_back({{piece, role}});
  return out;
}

std::vector<Line> heatmap_lines(const Step& step, const std::vector<std::string>& tokens, const LayoutOptions& options) {
  std::vector<Line> out;
  for (const HeatMap& m : heat_maps(step, tokens)) {
    if (!out.empty()) out.push_back({});
    one_map(m, options, out);
    if (!m.note.empty())
      for (auto& l : wrap_text(m.note, options.width, "  ", Role::Legend)) out.push_back(std::move(l));
  }
  return out;
}

SlideText step_slide(const Trace& trace, std::size_t index, const LayoutOptions& o) {
  const Step& s = trace.steps[index];
  SlideText slide;
  const std::string number = "[" + std::to_string(index + 1) + "/" + std::to_string(trace.steps.size()) + "] ";
  const std::string title = " -- " + visible(s.title);
  Line first{{number, Role::Text}, {s.id, Role::StepId}};
  if (display_width(number + s.id + title) <= o.width) {
    first.push_back({title, Role::Heading});
    slide.head.push_back(first);
  } else {
    slide.head.push_back(first);
    for (auto& l : wrap_text(s.title, o.width, "  ", Role::Heading)) slide.head.push_back(l);
  }
  slide.head.push_back({});
  for (auto& l : wrap_text(s.explanation, o.width, "  ", Role::Text)) slide.head.push_back(l);
  slide.head.push_back({});
  for (const auto& code : prompt_lines(s.code))
    for (auto& l : wrap_preformatted(code, o.width, Role::Code, 4)) slide.head.push_back(l);

  slide.body.push_back({{shape_text(s), Role::Tensor}});
  std::istringstream lines(value_text(s));
  std::string line;
  while (std::getline(lines, line))
    for (auto& l : wrap_preformatted(line, o.width, Role::Tensor, 4)) slide.body.push_back(l);
  if (s.heatmap) {
    std::vector<Line> map = heatmap_lines(s, trace.inputs.tokens, o);
    if (!map.empty()) slide.body.push_back({});
    for (auto& l : map) slide.body.push_back(std::move(l));
  }
  return slide;
}

SlideText lesson_slide(const Trace& trace, std::size_t k, std::size_t n, const LayoutOptions& o) {
  SlideText slide;
  const LessonInfo& info = trace.info;
  for (auto& l : wrap_text("Lesson " + std::to_string(k) + " of " + std::to_string(n) + ": attn " + info.name + " -- " +
                               info.section + " " + info.title,
                           o.width, "", Role::Heading))
    slide.head.push_back(l);
  slide.head.push_back({});
  for (auto& l : wrap_text(info.summary, o.width, "  ", Role::Text)) slide.head.push_back(l);
  slide.head.push_back({});
  if (trace.show_inputs) {
    for (auto& l : wrap_text("inputs: " + count_of(trace.inputs.num_tokens(), "token") + " x " +
                                 count_of(trace.inputs.d_in(), "dim") + " from " + trace.inputs.source,
                             o.width, "  ", Role::Text))
      slide.head.push_back(l);
    std::vector<std::string> tokens{"tokens:"};
    for (const auto& t : trace.inputs.tokens) tokens.push_back("'" + visible(t) + "'");
    for (const auto& line : fill(tokens, o.width, "  ", "    ")) slide.head.push_back({{line, Role::Label}});
  }
  for (const auto& note : note_lines(trace))
    for (auto& l : wrap_text(note, o.width, "  ", Role::Text)) slide.head.push_back(l);
  for (const auto& m : trace.modules)
    for (auto& l : wrap_preformatted("  module: " + m.name + " = " + m.code + ", " + with_commas(m.num_params) +
                                         " parameters",
                                     o.width, Role::Code, 4))
      slide.head.push_back(l);
  slide.head.push_back({});
  for (auto& l : wrap_text(count_of(trace.steps.size(), "step") + " follow.", o.width, "  ", Role::Text))
    slide.head.push_back(l);
  return slide;
}

std::string plain(const Line& line) {
  std::string out;
  for (const auto& s : line) out += s.text;
  return out;
}

std::size_t line_width(const Line& line) { return display_width(plain(line)); }

std::vector<std::string> note_lines(const Trace& trace) {
  std::vector<std::string> lines;
  const auto table = [&] {
    const NoteTable& tab = *trace.note_table;
    const auto row = [&](const std::vector<std::string>& cells) {
      std::string line = " ";
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::size_t w = c < tab.widths.size() ? tab.widths[c] : 0;
        const std::string pad(cells[c].size() < w ? w - cells[c].size() : 0, ' ');
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
