#include "bench/spread.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/strings.hpp"

namespace attn {

TimeRange time_range(const std::vector<double>& times) {
  if (times.empty()) throw std::logic_error("time_range: no timed runs");
  std::vector<double> v = times;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {v.front(), n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.back()};
}

double spread_percent(const TimeRange& r) {
  return r.median_s > 0 ? 100.0 * (r.max_s - r.min_s) / r.median_s : 0.0;
}

std::optional<std::string> busy_warning(const std::vector<NamedRange>& rows) {
  const NamedRange* widest = nullptr;
  std::size_t busy = 0;
  for (const NamedRange& row : rows) {
    if (spread_percent(row.range) <= kBusySpreadPercent) continue;
    ++busy;
    if (widest == nullptr || spread_percent(row.range) > spread_percent(widest->range)) widest = &row;
  }
  if (widest == nullptr) return std::nullopt;
  const std::string others = busy == 1 ? "" : " (" + count_of(busy - 1, "other row") + " too)";
  return fmt::format(
      "attn: bench: the machine is busy: {}'s times vary by {:.1f}% of their median, more than {:.0f}%{}; close "
      "other programs and run it again, and compare only rows whose ranges do not overlap",
      widest->name, spread_percent(widest->range), kBusySpreadPercent, others);
}

std::string range_ms(const TimeRange& r) { return fmt::format("{:.3f}..{:.3f}", r.min_s * 1e3, r.max_s * 1e3); }

std::optional<std::string> speed_claim(const NamedRange& a, const NamedRange& b) {
  if (!(a.range.median_s > 0) || !(b.range.median_s > 0)) return std::nullopt;
  const bool a_first = a.range.median_s <= b.range.median_s;
  const NamedRange& fast = a_first ? a : b;
  const NamedRange& slow = a_first ? b : a;
  if (fast.range.max_s < slow.range.min_s)
    return fmt::format("{} is {:.2f}x faster than {}", fast.name, slow.range.median_s / fast.range.median_s,
                       slow.name);
  return fmt::format("{} and {} are within each other's spread ({} {} ms, {} {} ms): this run cannot tell which is "
                     "faster",
                     fast.name, slow.name, fast.name, range_ms(fast.range), slow.name, range_ms(slow.range));
}

}  // namespace attn
