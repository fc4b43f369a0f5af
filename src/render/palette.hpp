#pragma once
// The heatmap palettes: perceptually uniform and readable with the common colour-vision deficiencies.
// Viridis for dark backgrounds and the text view, cividis (designed for deuteranopia and protanopia) for
// the light theme, a diverging blue-white-red (ColorBrewer's RdBu, colour-blind safe) for signed values
// centred on 0, and their nearest colours in the xterm 256-colour cube.
#include <string>

namespace attn {

struct Rgb {
  double r, g, b;
};

enum class Palette { Viridis, Cividis, Diverging };

// The colour at x in [0, 1] (NaN: 0), interpolated between the palette's even stops (ten of matplotlib's
// colormaps; eleven of RdBu, from blue at 0 through white at 0.5 to red at 1).
Rgb palette_color(Palette p, double x);
inline Rgb viridis(double x) { return palette_color(Palette::Viridis, x); }

// The nearest colour of the xterm 256-colour cube and grey ramp (indices 16 to 255).
int xterm256(const Rgb& c);

// Whether black text reads better than white on `c` (perceived brightness).
bool is_light(const Rgb& c);

}  // namespace attn
