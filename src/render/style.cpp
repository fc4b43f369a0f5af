#include "render/style.hpp"

namespace attn {

TextStyle resolve_style(When color, When heatmap, bool explain, bool quiet, const Terminal& term) {
  TextStyle style;
  const bool auto_color = term.stdout_tty && term.no_color.empty() && term.term != "dumb";
  style.color = color == When::Always || (color == When::Auto && auto_color);
  style.truecolor = style.color && (term.colorterm == "truecolor" || term.colorterm == "24bit");
  style.heatmaps = heatmap == When::Always || (heatmap == When::Auto && term.stdout_tty);
  style.explain = explain && !quiet;
  style.quiet = quiet;
  style.width = term.stdout_tty ? term.columns : 0;
  return style;
}

}  // namespace attn
