#pragma once
// How the text view looks on this terminal: colour (256-colour or 24-bit), heatmaps, how much is said.
#include <string>

#include "io/terminal.hpp"
#include "text/words.hpp"

namespace attn {

enum class When { Never, Auto, Always };

// --scale: where a heatmap's cells sit on its palette (render/heatmap.hpp, HeatMap::shade).
enum class HeatScale {
  Fixed,   // the default: weights (values within 0..1) on 0..1, a signed matrix centred on 0, else 0..max
  Matrix,  // the matrix's own min to its max
  Row,     // each row from its own min to its max
};

struct TextStyle {
  bool color = false;      // ANSI escapes at all
  bool truecolor = false;  // 24-bit rather than the xterm 256-colour cube
  bool heatmaps = false;   // draw weight matrices as heatmaps too
  bool explain = true;     // titles' explanation and the book's code
  bool quiet = false;      // only step ids and tensors
  HeatScale scale = HeatScale::Fixed;  // --scale: heatmap colours
  // The columns of the terminal stdout is, 0 when it is not one (a pipe, a file): then the output is the
  // same whatever the terminal, 80-column text. On a terminal of known width, lines are wrapped between
  // words and numbers and heatmaps fitted to it (render/layout.hpp), as the presenter does.
  std::size_t width = 0;
  Words words;  // the renderers' words: the document's
};

// --color: auto means stdout is a terminal, NO_COLOR unset or empty, and TERM not "dumb".
// --heatmap: auto means stdout is a terminal.
TextStyle resolve_style(When color, When heatmap, bool explain, bool quiet, const Terminal& term);

// SGR escapes, empty when colour is off.
struct Paint {
  bool on = false;
  std::string bold(const std::string& s) const { return on ? "\x1b[1m" + s + "\x1b[0m" : s; }
  std::string dim(const std::string& s) const { return on ? "\x1b[2m" + s + "\x1b[0m" : s; }
  std::string cyan(const std::string& s) const { return on ? "\x1b[36m" + s + "\x1b[0m" : s; }
};

}  // namespace attn
