#pragma once
// A weight matrix as a heatmap: the matrices of a step as data (HeatMap: labels, values, and where each cell
// sits on the palette under --scale), and the text view's heatmap in a pipe: token labels on rows (queries)
// and columns (keys), the number in every cell, masked cells marked with a symbol, and a legend that states
// its scale. Every figure that draws a heatmap (render/layout.hpp on a terminal, render/figure.hpp in HTML
// and SVG) colours its cells from HeatMap::shade, so every format says the same of the same matrix.
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "render/style.hpp"
#include "document/document.hpp"

namespace attn {

inline constexpr std::size_t kHeatmapMaxTokens = 16;

// A cell's number in at most 5 characters: 0.55, -1.25, 12.3, 1e+04.
std::string heat_number(float v);

// `cell` on the palette's colour at x in [0, 1] (viridis, or the diverging palette; ANSI: 256-colour, or
// 24-bit with style.truecolor), with black or white text, whichever reads better; `cell` itself when colour
// is off.
std::string ansi_cell(const std::string& cell, double x, const TextStyle& style, bool diverging = false);

// One matrix of a heatmap step as data.
struct HeatMap {
  std::string caption;  // "rows are queries, columns are keys; batch 0 of 2, head 1"
  // What every map of its step has in common ("rows are queries, columns are keys; batch 0 of 2"), said
  // once over a grid of them, and this map's name in it ("head 1"; "" for a step of one map).
  std::string common, name;
  std::size_t rows = 0, keys = 0;
  std::size_t first = 0;  // the position of row 0 (a KV-cache call's first query)
  bool causal = false;
  bool of_tokens = true;  // labels are tokens, else positions
  std::vector<std::string> labels;  // every position's label, a token as token_repr() shows it: rows use labels[first + i]
  std::vector<float> values;        // (rows, keys)
  double min = 0.0, max = 0.0;      // over the cells drawn on the scale (finite, not masked)
  // The same over every map of the step (all its heads), which the fixed scale is made from, so a step's
  // heads are coloured alike.
  double step_min = 0.0, step_max = 0.0;
  std::vector<double> row_lo, row_span;  // each row's own scale (HeatScale::Row): its min, and max - min
  std::string note;  // under the map: what the head mostly does (Step::head_notes), or ""
  Words words;  // of its caption and legend

  float at(std::size_t i, std::size_t j) const { return values[i * keys + j]; }
  bool masked(std::size_t i, std::size_t j) const;
  // The cell's place on the palette, 0 to 1, under `scale` (style.hpp); NaN for a masked or non-finite cell.
  double shade(std::size_t i, std::size_t j, HeatScale scale) const;
  // Whether `scale` colours this matrix with the diverging palette (a signed matrix on the fixed scale,
  // centred on 0) rather than the sequential one.
  bool diverging(HeatScale scale) const;
  // The scale's two ends as the legend labels them ("0" and "1"; "-2.3" and "2.3"; "row min" and "row max").
  std::string low_end(HeatScale scale) const;
  std::string high_end(HeatScale scale) const;
  // What the legend says of the scale, in a few words: "fixed scale: 0 to 1 (the weights lie between 0.16
  // and 0.17)", "each row from its own min to max".
  std::string scale_words(HeatScale scale) const;
  // The fixed scale's ends: 0 and 1 for a step whose values lie within 0..1, -m and m for a signed step (m
  // its largest magnitude), else 0 and the step's max.
  double fixed_lo() const;
  double fixed_hi() const;
};
// The matrices of a heatmap step: every head of the first batch element of a (rows, keys), (b, rows, keys)
// or (b, h, rows, keys) tensor, or of an overview step's (heads, rows, keys) (Step::overview, with each
// head's note); empty for other shapes. With `of_tokens`, rows are the queries at positions first_query..
// and columns the keys from position 0, labelled by `tokens`; otherwise rows and columns are labelled by
// position. A causal map marks the keys after each query's position.
std::vector<HeatMap> heat_maps(const Step& step, const std::vector<std::string>& tokens, const Words& words = {});
// The note most of a layer's heads share (HeatMap::note: at least two of them; the earliest on a tie), said
// once for the layer, so that a map carries its own note only where it differs; "" when no two share one.
struct CommonNote {
  std::string note;
  std::size_t heads = 0;  // how many share it
  // "8 of 12 heads: spread" in `words`, "" for none.
  std::string said(std::size_t of, const Words& words) const;
  // Whether `m`'s note is its own, to show under it: one that is not this.
  bool own(const HeatMap& m) const { return !m.note.empty() && m.note != note; }
};
CommonNote common_note(const std::vector<HeatMap>& maps);

// The text view's heatmaps of a step in a pipe (every number in its cell, up to kHeatmapMaxTokens keys):
// "" for shapes that are not such a matrix and a one-line note past kHeatmapMaxTokens keys.
std::string heatmaps(const Step& step, const std::vector<std::string>& tokens, const TextStyle& style);
// The columns one of those maps takes with `keys` keys (its widest line, a row: the label, then a cell per key).
std::size_t heatmap_width(std::size_t keys);

// The line or two of key labels over a map's columns: `cell` columns per key after `indent`, each label
// right-aligned over its own column. When a label does not fit its cell (a token as token_repr shows it,
// 'journey', is wider than a number), the labels alternate between two lines, so that each may take up to
// two cells less a column, and the book's tokens show whole rather than cut to 'jou…'. No line is wider than
// indent + cell * labels.size().
std::vector<std::string> key_label_lines(const std::vector<std::string>& labels, std::size_t indent, std::size_t cell);

}  // namespace attn
