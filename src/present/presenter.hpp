#pragma once
// `attn present`: the document full screen, one slide per step, on ncurses (the library made for
// full-screen terminal programs: key codes of every terminal, resizes, the alternate screen, restoring
// the terminal). What the keys do is present/deck.hpp; what a slide holds is render/layout.hpp.
#include "render/style.hpp"
#include "document/document.hpp"

namespace attn {

enum class Theme { Dark, Light, Contrast };

struct PresentOptions {
  bool reveal = false;       // --reveal: each step's code first, its result on the next key
  Theme theme = Theme::Dark;  // --theme
  HeatScale scale = HeatScale::Fixed;  // --scale: the heatmaps' colour scale (the s key cycles)
  bool color = true;         // --color, NO_COLOR, TERM=dumb: off means monochrome with reverse video
  bool explain = true;       // --no-explain: each step's title and result, without its explanation and code
};

// The usage error when standard input or output is not a terminal (checked by the command line before
// any work, and by present() itself).
inline constexpr const char* kNeedsTerminal =
    "attn present draws on a terminal: run it with standard input and output on one (for a pipe or a file, use "
    "attn tour)";

// Runs until the class quits (q, Ctrl-C, Esc when no head is open, SIGTERM, SIGHUP), then restores the
// terminal: also when an error ends it. A UsageError when standard input and output are not a terminal
// that can place the cursor.
void present(const Document& doc, const PresentOptions& options);

}  // namespace attn
