// --format svg --step ID: one figure as a standalone SVG file for slides (docs/html.md): a weight matrix as
// heatmaps (every head of the first batch element, side by side in a grid that wraps), or a small tensor as a table of
// numbers, with a title, labelled axes, a legend and an explicit size. One figure per run: the step is
// chosen on the plan, before any work, and a run that does not name exactly one drawable step is a usage
// error that lists the ones that can be drawn.
#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/terminal_text.hpp"
#include "render/figure.hpp"
#include "render/renderer.hpp"
#include "text/words.hpp"

namespace attn {

namespace {

bool drawable(const Step& s) {
  if (s.python_float || s.python_int) return false;
  if (s.heatmap) return s.shape.size() >= 2 && s.shape.size() <= 4 && s.shape.back() <= kFigureMaxKeys;
  return table_drawable(s.shape);
}

std::string drawable_list(const Section& t) {
  std::string out;
  for (const Step& s : t.steps)
    if (drawable(s)) out += (out.empty() ? "" : ", ") + s.id;
  return out;
}

// The one step a run draws (checked by SvgRenderer::check).
const Step& chosen(const Document& doc) {
  const Section& t = doc.sections.front();
  for (const Step& s : t.steps)
    if (doc.shows(s) && drawable(s)) return s;
  throw std::logic_error("--format svg: no drawable step");
}

class SvgRenderer : public Renderer {
 public:
  explicit SvgRenderer(const RenderOptions& options) : scale_(options.style.scale) {}

  void check(const Document& doc) const override {
    if (doc.is_tour() || doc.sections.size() != 1)
      throw UsageError("--format svg draws one figure: give one lesson and --step ID (the tour has many; "
                       "--format html makes a page of it)");
    const Section& t = doc.sections.front();
    const std::string ids = drawable_list(t);
    if (ids.empty())
      throw UsageError("attn " + t.info.name + " has no step --format svg can draw (a weight matrix, or a tensor of at most " +
                       std::to_string(kTableMax) + " x " + std::to_string(kTableMax) + " numbers) with these options");
    std::size_t shown = 0, drawn = 0;
    const Step* refused = nullptr;
    for (const Step& s : t.steps) {
      if (!doc.shows(s)) continue;
      ++shown;
      if (drawable(s)) {
        ++drawn;
      } else {
        refused = &s;
      }
    }
    if (doc.only.empty() && drawn == 1) return;  // the lesson's only figure
    if (doc.only.size() == 1 && refused != nullptr)
      throw UsageError("--format svg cannot draw " + refused->id + " (" + shape_words(*refused) +
                       "): it draws a weight matrix, or a tensor of at most " + std::to_string(kTableMax) + " x " +
                       std::to_string(kTableMax) + " numbers; attn " + t.info.name + " can draw: " + ids);
    if (shown != 1)
      throw UsageError("--format svg draws one figure; choose it with --step ID. attn " + t.info.name +
                       " can draw: " + ids);
  }

  // The figure as text: measured (2026-11-26) at 8 KiB a map plus its labels and about 250 bytes a cell with
  // its number, 300 without (64 keys); bounded here by 8 KiB + 250 bytes a label + 320 a cell. The text
  // grows by doubling and is copied once into the output: four times its size in all (measured: 3.1).
  std::size_t working_bytes(const Document& doc) const override {
    const Step& s = chosen(doc);
    if (!s.heatmap) return std::size_t{1} << 20;  // a table of at most 16 x 16 numbers
    const std::size_t rank = s.shape.size(), keys = s.shape[rank - 1], rows = s.shape[rank - 2];
    const std::size_t maps = rank == 4 ? s.shape[1] : s.overview && rank == 3 ? s.shape[0] : 1;  // every head
    const std::size_t per_map = saturating_sum(saturating_sum(8 << 10, saturating_product({rows + keys, 250})),
                                               saturating_product({rows, keys, 320}));
    return saturating_sum(std::size_t{1} << 20, saturating_product({maps, per_map, 4}));
  }

  std::vector<Chunk> render(const Document& doc) const override {
    const Section& t = doc.sections.front();
    const Step& s = chosen(doc);
    const std::string title = s.id + " \xe2\x80\x94 " + s.title;
    FigureOptions o;
    o.uid = "attn";
    o.standalone = true;
    o.title = title;
    o.words = doc.words;
    if (!s.heatmap) return one_chunk("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg_table(s, t.inputs.tokens, o));
    // Heatmaps: one map under the title, with its caption and legend; several (a step's heads, an overview
    // step's) in a grid of about a slide's shape (grid_columns), as the page's slides draw them: what they
    // have in common said once over the grid (and the note most heads share), each map's name over it and its
    // own note under it where it differs, and one legend under them all.
    const std::vector<HeatMap> maps = heat_maps(s, t.inputs.tokens, doc.words);
    if (maps.size() == 1) {
      FigureOptions one = o;
      one.scale = scale_;
      return one_chunk("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg_heatmap(maps.front(), one).svg);
    }
    const CommonNote common = common_note(maps);
    std::vector<Figure> figures;
    for (std::size_t k = 0; k < maps.size(); ++k) {
      FigureOptions inner;
      inner.uid = "m" + std::to_string(k + 1);
      inner.scale = scale_;
      inner.in_grid = true;
      figures.push_back(svg_heatmap(maps[k], inner));
    }
    double cell_w = 0.0, cell_h = 0.0;
    for (const Figure& f : figures) cell_w = std::max(cell_w, f.width), cell_h = std::max(cell_h, f.height);
    const double gap = 16.0, name_height = 22.0, note_height = std::any_of(maps.begin(), maps.end(), [&](const HeatMap& m) { return common.own(m); }) ? 18.0 : 0.0;
    const std::size_t columns = grid_columns(figures.size(), cell_w, cell_h + name_height + note_height);
    std::string caption = maps.front().common;
    if (!common.note.empty()) caption += " \xe2\x80\x94 " + common.said(maps.size(), doc.words);
    std::string maps_svg = "<text class=\"caption\" x=\"12\" y=\"46\">" + html_escape(caption) + "</text>\n";
    const double top = 60.0, step_h = name_height + cell_h + note_height + gap;
    for (std::size_t k = 0; k < figures.size(); ++k) {
      const double x = static_cast<double>(k % columns) * (cell_w + gap), y = top + static_cast<double>(k / columns) * step_h;
      maps_svg += "<text class=\"name\" x=\"" + std::to_string(static_cast<int>(x) + 12) + "\" y=\"" +
                  std::to_string(static_cast<int>(y) + 16) + "\" font-size=\"14\" font-weight=\"bold\">" +
                  html_escape(maps[k].name) + "</text>\n";
      maps_svg += "<g transform=\"translate(" + std::to_string(static_cast<int>(x)) + "," +
                  std::to_string(static_cast<int>(y + name_height)) + ")\">\n" + figures[k].svg + "</g>\n";
      if (common.own(maps[k]))
        maps_svg += "<text class=\"note\" x=\"" + std::to_string(static_cast<int>(x) + 12) + "\" y=\"" +
                    std::to_string(static_cast<int>(y + name_height + cell_h + 13.0)) + "\" font-size=\"11\">" +
                    html_escape(maps[k].note) + "</text>\n";
    }
    const std::size_t grid_rows = (figures.size() + columns - 1) / columns;
    double width = std::max({12.0 * 2 + 8.5 * static_cast<double>(display_width(visible(title))),  // 14px bold
                             24.0 + 7.0 * static_cast<double>(display_width(caption)),
                             static_cast<double>(columns) * (cell_w + gap) - gap});
    double y = top + static_cast<double>(grid_rows) * step_h;
    FigureOptions key;
    key.uid = "key";
    key.scale = scale_;
    const Figure legend = svg_legend(maps, key);
    maps_svg += "<g transform=\"translate(0," + std::to_string(static_cast<int>(y)) + ")\">\n" + legend.svg + "</g>\n";
    y += legend.height + 8.0;
    width = std::max(width, legend.width);
    return one_chunk("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svg_open(std::ceil(width), std::ceil(y), o, title) +
                     maps_svg + "</svg>\n");
  }

 private:
  static std::string shape_words(const Step& s) {
    if (s.python_float) return "a Python float";
    if (s.python_int) return "a Python int";
    if (s.shape.empty()) return "a single number";
    return "shape " + shape_tuple(s.shape);
  }

  HeatScale scale_;
};

}  // namespace

std::unique_ptr<Renderer> make_svg_renderer(const RenderOptions& options) {
  return std::make_unique<SvgRenderer>(options);
}

}  // namespace attn
