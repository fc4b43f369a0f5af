#include "core/limits.hpp"

#include <cstdio>

#include "core/errors.hpp"
#include "core/strings.hpp"

namespace attn {

void check_elements(const std::string& what, std::initializer_list<std::size_t> shape) {
  const std::size_t count = saturating_product(shape);
  if (count > kMaxElements)
    throw UsageError("this would build " + what + " of " + with_commas(count) + " numbers, more than the limit of " +
                     with_commas(kMaxElements) + "; use fewer tokens, heads or a smaller batch");
}

namespace {

// "1.5 GiB", "640 MiB": a byte count as the memory budget's message gives it.
std::string size_words(std::size_t bytes) {
  char out[32];
  if (bytes >= (std::size_t{1} << 30)) {
    std::snprintf(out, sizeof out, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  } else {
    std::snprintf(out, sizeof out, "%zu MiB", (bytes + (1u << 20) - 1) >> 20);
  }
  return out;
}

constexpr const char* kFewer =
    "; use fewer tokens, dimensions, heads or a smaller batch, or raise it with --max-memory";

}  // namespace

void check_budget(const std::string& command, std::size_t need, std::size_t budget) {
  if (need <= budget) return;
  throw UsageError("attn " + command + " would need an estimated " + size_words(need) +
                   " of memory, more than the budget of " + size_words(budget) + kFewer);
}

UsageError part_refusal(const std::string& command, std::size_t need, std::size_t budget, const std::string& counted) {
  return UsageError("attn " + command + " would need at least " + size_words(need) + " of memory (" + counted +
                    "), more than the budget of " + size_words(budget) + kFewer);
}

void check_part(const std::string& command, std::size_t need, std::size_t budget, const std::string& counted) {
  if (need > budget) throw part_refusal(command, need, budget, counted);
}

}  // namespace attn
