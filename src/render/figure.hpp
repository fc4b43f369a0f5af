#pragma once
// Figures as SVG, shared by the HTML page (render/html.cpp) and the standalone SVG (render/svg.cpp): a
// weight matrix as a heatmap (render/layout.hpp's HeatMap: the same matrices, labels and palette places as
// the terminal's), and a small tensor as a table of numbers. Every text from outside is escaped here.
#include <string>

#include "core/strings.hpp"  // exact_number, shape_tuple
#include "render/heatmap.hpp"
#include "document/document.hpp"

namespace attn {

// `text` safe inside HTML or XML text and attribute values: whatever it holds, the characters XML 1.0
// forbids are made visible first (core/terminal_text's xml_safe: control bytes as \xNN, U+FFFE and U+FFFF
// as \u{fffe}), then & < > " ' become character references.
std::string html_escape(const std::string& text);
// Text from outside (tokens, file names, notes) as HTML: visible(), then escaped.
std::string markup(const std::string& text);
// Text of several lines (code, a printed tensor) as HTML: each line as markup(), the line feeds kept.
std::string markup_lines(const std::string& text);

// "#1f9e89": the palette's colour at x in [0, 1]: viridis, or the diverging palette (render/palette.hpp).
std::string palette_hex(double x, bool diverging = false);

struct FigureOptions {
  std::string uid;          // unique in the page: the prefix of the figure's element ids
  bool standalone = false;  // an SVG file of its own: xmlns, a white background, explicit colours, a title
  std::string title;        // standalone: the title line (step id and title)
  HeatScale scale = HeatScale::Fixed;  // --scale: where the cells sit on the palette
  // In a page: each coloured cell, number, swatch and legend text also carries its look on every scale
  // (data-fill-fixed, data-fill-matrix, data-fill-row; data-text-*), which the page's scale buttons swap in.
  bool scale_choices = false;
  Words words;  // of a figure that is no heatmap (a table's caption); a heatmap's are its own
  // A map of a grid (a step's heads): no caption and no legend of its own, as the grid says them once (its
  // common caption, each map's name over it, svg_legend under them all).
  bool in_grid = false;
};

// The largest number of keys drawn cell by cell (more: a note instead).
inline constexpr std::size_t kFigureMaxKeys = 64;

// One matrix as an SVG heatmap: token labels on both axes, every number in its cell up to 16 keys,
// colour-only cells beyond, masked cells hatched, and a legend that states its scale. Each cell carries its
// exact value and its query/key pair (aria-label, title, data-value) for hovering, focus and screen readers.
struct Figure {
  std::string svg;
  double width = 0.0, height = 0.0;
};
// The cells' group carries their box, data-box="x y width height", for a page that shows the cells alone.
Figure svg_heatmap(const HeatMap& map, const FigureOptions& options);
// The one legend of a grid of `maps` (a step's heads, svg_heatmap with in_grid): the palette between the
// scale's two ends, what the scale is for every map, and the masked cells' pattern; with scale_choices, its
// texts on every scale.
Figure svg_legend(const std::vector<HeatMap>& maps, const FigureOptions& options);

// Whether `shape` can be drawn as a table figure (rank 1 or 2, at most kTableMax rows and columns).
inline constexpr std::size_t kTableMax = 16;
bool table_drawable(const std::vector<std::size_t>& shape);
// The opening <svg> tag of a figure (standalone: with xmlns, a title, a white background and the title
// line; in a page: a group labelled `label` in the page's text colour). Close it with "</svg>\n".
std::string svg_open(double width, double height, const FigureOptions& options, const std::string& label);

// A computed step's tensor as an SVG table of numbers (rows labelled by token when there is one per token).
std::string svg_table(const Step& step, const std::vector<std::string>& tokens, const FigureOptions& options);

// One head of an overview step (attn heads, bertviz's model view) as a small colour-only map on
// options.scale: no labels, no numbers, masked cells light grey (its note, Step::head_notes, is the page's
// to place, render/html.cpp). Each cell is about 96 / keys units (2 to 16).
Figure svg_small_map(const HeatMap& map, const FigureOptions& options);

// The key to a grid of small maps (an overview): the palette from options.scale's low end to its high end,
// and what the scale is, in words that hold for every map of the grid.
Figure svg_scale_key(const HeatMap& map, const FigureOptions& options);

// The maps of one step as bertviz's head view (render/lines.cpp): queries on the left, keys on the right,
// a line from each query to each key whose opacity is the weight (clamped to 0..1), one colour per map
// (head). Every token is a text element with data-q or data-k that the page's script focuses; every line
// carries data-head, data-q and data-k. Maps of positions (not of tokens) have no lines view.
Figure svg_lines(const std::vector<HeatMap>& maps, const FigureOptions& options);
// The colour of head h's lines and toggle (a categorical palette, Tableau 10, cycled).
std::string head_colour(std::size_t h);

// How many columns a grid of `n` maps of width x height (and a gap between them) takes: the number that
// makes each map largest in a 16:9 box, a slide's shape (12 square heads: 4 x 3; 2: side by side).
std::size_t grid_columns(std::size_t n, double width, double height);

}  // namespace attn
