#include "render/palette.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace attn {

namespace {

using Stops = std::array<Rgb, 10>;

// matplotlib's viridis and cividis (public domain), sampled at ten even stops.
const Stops kViridis{{{68, 1, 84},
                      {72, 40, 120},
                      {62, 74, 137},
                      {49, 104, 142},
                      {38, 130, 142},
                      {31, 158, 137},
                      {53, 183, 121},
                      {109, 205, 89},
                      {180, 222, 44},
                      {253, 231, 37}}};
const Stops kCividis{{{0, 34, 78},
                      {18, 53, 112},
                      {59, 73, 108},
                      {87, 93, 109},
                      {112, 113, 115},
                      {138, 134, 120},
                      {165, 156, 116},
                      {195, 179, 105},
                      {225, 204, 85},
                      {254, 232, 56}}};

// ColorBrewer's RdBu (Cynthia Brewer, Apache-2.0), its 11 classes from blue to red: negative values blue,
// 0 white, positive red.
const std::array<Rgb, 11> kDiverging{{{5, 48, 97},
                                      {33, 102, 172},
                                      {67, 147, 195},
                                      {146, 197, 222},
                                      {209, 229, 240},
                                      {247, 247, 247},
                                      {253, 219, 199},
                                      {244, 165, 130},
                                      {214, 96, 77},
                                      {178, 24, 43},
                                      {103, 0, 31}}};

template <std::size_t N>
Rgb interpolate(const std::array<Rgb, N>& stops, double x) {
  x = (std::isnan(x) ? 0.0 : std::clamp(x, 0.0, 1.0)) * (N - 1);  // NaN has no place on the scale
  const std::size_t i = std::min(static_cast<std::size_t>(x), N - 2);
  const double f = x - static_cast<double>(i);
  const Rgb& a = stops[i];
  const Rgb& b = stops[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

}  // namespace

Rgb palette_color(Palette p, double x) {
  switch (p) {
    case Palette::Cividis: return interpolate(kCividis, x);
    case Palette::Diverging: return interpolate(kDiverging, x);
    case Palette::Viridis:
    default: return interpolate(kViridis, x);
  }
}

int xterm256(const Rgb& c) {
  // The nearest of the 6x6x6 cube (levels 0, 95, 135, 175, 215, 255) and the 24 greys (8, 18, ..., 238), by
  // distance in RGB: nearest per channel alone turns cividis's blue-greys into teal and grey steps that
  // no longer rise with the value.
  static const std::array<int, 6> levels{0, 95, 135, 175, 215, 255};
  const auto distance = [&c](double r, double g, double b) {
    return (c.r - r) * (c.r - r) + (c.g - g) * (c.g - g) + (c.b - b) * (c.b - b);
  };
  int best = 16;
  double best_distance = distance(0, 0, 0);
  for (int i = 0; i < 216; ++i) {
    const double d = distance(levels[i / 36], levels[i / 6 % 6], levels[i % 6]);
    if (d < best_distance) best_distance = d, best = 16 + i;
  }
  for (int i = 0; i < 24; ++i) {
    const double grey = 8 + 10 * i, d = distance(grey, grey, grey);
    if (d < best_distance) best_distance = d, best = 232 + i;
  }
  return best;
}

bool is_light(const Rgb& c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 140.0; }

}  // namespace attn
