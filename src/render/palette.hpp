#pragma once
// The heatmap palettes: perceptually uniform and readable with the common colour-vision deficiencies.
// Viridis for dark backgrounds and the text view, cividis (designed for deuteranopia and protanopia) for
// the light theme, and their nearest colours in the xterm 256-colour cube.
#include <string>

namespace attn {

struct Rgb {
  double r, g, b;
};

enum class Palette { Viridis, Cividis };

// The colour at x in [0, 1] (NaN: 0), interpolated between ten even stops of matplotlib's colormap.
Rgb palette_color(Palette p, double x);
inline Rgb viridis(double x) { return palette_color(Palette::Viridis, x); }

// The nearest colour of the xterm 256-colour cube and grey ramp (indices 16 to 255).
int xterm256(const Rgb& c);

// Whether black text reads better than white on `c` (perceived brightness).
bool is_light(const Rgb& c);

}  // namespace attn
