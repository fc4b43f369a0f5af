#pragma once
// Limits that keep a typo from exhausting memory or time; docs/errors.md lists them.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

namespace attn {

inline constexpr std::size_t kMaxTokens = 8192;      // rows of an input
inline constexpr std::size_t kMaxDims = 4096;        // d_in, and --d-out
inline constexpr std::size_t kMaxHeads = 1024;       // --heads, --kv-groups
inline constexpr std::size_t kMaxBatch = 64;         // --batch
inline constexpr std::size_t kMaxThreads = 1024;     // --threads
inline constexpr std::size_t kMaxNewTokens = 1024;   // --max-new-tokens: GPT-2's context length
inline constexpr std::size_t kMaxElements = std::size_t{1} << 28;    // any one tensor: 268,435,456 floats (1 GiB)
inline constexpr std::size_t kMaxJsonNumbers = std::size_t{1} << 25;  // all of --json's data: 33,554,432 numbers
inline constexpr std::size_t kMaxFileBytes = std::size_t{512} << 20;  // an input file: 512 MiB
// The memory a run may use, estimated from its plan before any work (--max-memory raises or lowers it):
// 4 GiB, half of a small laptop's 8.
inline constexpr std::size_t kDefaultMemoryBudget = std::size_t{4} << 30;
// What every run needs besides its tensors (code, OpenBLAS's buffers, the output), and what the JSON
// renderer needs per number it writes; both measured with a margin (docs/performance.md).
inline constexpr std::size_t kBaseBytes = std::size_t{96} << 20;
inline constexpr std::size_t kJsonBytesPerNumber = 64;

// The product of the factors, or SIZE_MAX if it overflows.
inline std::size_t saturating_product(std::initializer_list<std::size_t> factors) {
  std::size_t total = 1;
  for (std::size_t f : factors) {
    if (f != 0 && total > std::numeric_limits<std::size_t>::max() / f) return std::numeric_limits<std::size_t>::max();
    total *= f;
  }
  return total;
}

// a + b, or SIZE_MAX if it overflows.
inline std::size_t saturating_sum(std::size_t a, std::size_t b) {
  return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max() : a + b;
}

// Refuses (a UsageError) a configuration whose tensor `what` would hold more than kMaxElements floats.
void check_elements(const std::string& what, std::initializer_list<std::size_t> shape);

// Refuses (a UsageError, exit 2) `attn COMMAND` when its estimated memory `need` is past `budget`
// (--max-memory), with both in the words of every budget's refusal: the lessons' (run/run.cpp, on their
// plan) and attn bench's (cli/bench_options.cpp, on its options), each before any work.
void check_budget(const std::string& command, std::size_t need, std::size_t budget);

// A check before the plan is known (the process's base; the inputs before they are read or drawn; the heap
// while they are read and planned, core/heap_budget.hpp): `need` is part of what the run needs, so the
// refusal says "at least", and names what it has counted ("for its inputs").
struct UsageError;
UsageError part_refusal(const std::string& command, std::size_t need, std::size_t budget, const std::string& counted);
void check_part(const std::string& command, std::size_t need, std::size_t budget, const std::string& counted);

}  // namespace attn
