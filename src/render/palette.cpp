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

}  // namespace

Rgb palette_color(Palette p, double x) {
  const Stops& stops = p == Palette::Viridis ? kViridis : kCividis;
  x = (std::isnan(x) ? 0.0 : std::clamp(x, 0.0, 1.0)) * (stops.size() - 1);  // NaN has no place on the scale
  const std::size_t i = std::min(static_cast<std::size_t>(x), stops.size() - 2);
  const double f = x - static_cast<double>(i);
  const Rgb& a = stops[i];
  const Rgb& b = stops[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

int xterm256(const Rgb& c) {
  static const std::array<int, 6> levels{0, 95, 135, 175, 215, 255};
  const auto nearest = [](double v) {
    int best = 0;
    for (int i = 1; i < 6; ++i)
      if (std::fabs(levels[i] - v) < std::fabs(levels[best] - v)) best = i;
    return best;
  };
  return 16 + 36 * nearest(c.r) + 6 * nearest(c.g) + nearest(c.b);
}

bool is_light(const Rgb& c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 140.0; }

}  // namespace attn
