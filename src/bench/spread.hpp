#pragma once
// What attn bench may say about its times: each row's range (min..max of its timed runs), the busy-machine
// warning when a range is wide, and "A is Nx faster than B" only when two ranges do not overlap. Pure
// functions, apart from the timing, so that the tests check the words without timing anything (a busy
// machine once made the bench say "mha is 1.25x faster than fused", the reverse of the truth).
#include <optional>
#include <string>
#include <vector>

namespace attn {

// A row's timed runs, in seconds: the fastest, the median and the slowest.
struct TimeRange {
  double min_s = 0, median_s = 0, max_s = 0;
};
// The range of `times` (at least one run).
TimeRange time_range(const std::vector<double>& times);
// The range's width as a share of its median, in percent: (max - min) / median x 100.
double spread_percent(const TimeRange& r);

// A row is busy past this spread (percent): its runs then say more about the machine's other work than
// about the implementation.
inline constexpr double kBusySpreadPercent = 10.0;

struct NamedRange {
  std::string name;  // the row as the report names it ("mha", "gqa 1024")
  TimeRange range;
};

// One line when any row's spread is over kBusySpreadPercent, naming the widest and what to do; nothing
// otherwise. "attn: bench: the machine is busy: mha's times vary by 23% of their median (...) ...".
std::optional<std::string> busy_warning(const std::vector<NamedRange>& rows);

// What the two rows' times support, as one sentence: "A is N.NNx faster than B" (the ratio of the
// medians) when the faster row's slowest run beats the other's fastest, otherwise that the two are within
// each other's spread, with both ranges in milliseconds. Nothing when either row has no time.
std::optional<std::string> speed_claim(const NamedRange& a, const NamedRange& b);

// "1.234..1.456": a range in milliseconds, three decimals, as the text report's column prints it.
std::string range_ms(const TimeRange& r);

}  // namespace attn
