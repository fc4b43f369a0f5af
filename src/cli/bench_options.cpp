#include "cli/bench_options.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace attn {

std::string fill_impl_help(const std::string& help, const std::string& kv_groups) {
  return fmt::format(fmt::runtime(help), fmt::arg("kv_groups", kv_groups));
}
std::string bench_impls_help() {
  struct Line {
    std::string name, help;
  };
#define ATTN_BENCH_IMPL_LINE(name, run, gflop, max_nmse, help) {#name, fill_impl_help(help, "--kv-groups")},
  const std::vector<Line> lines{ATTN_BENCH_IMPLS(ATTN_BENCH_IMPL_LINE)};
#undef ATTN_BENCH_IMPL_LINE
  std::size_t width = 0;
  for (const Line& l : lines) width = std::max(width, l.name.size());
  std::string out;
  for (const Line& l : lines) out += "  " + l.name + std::string(width - l.name.size() + 2, ' ') + l.help + "\n";
  return out;
}

void check_bench(const BenchOptions& o) {
  if (o.dim % o.heads != 0)
    throw UsageError("--dim " + std::to_string(o.dim) + " is not divisible by --heads " + std::to_string(o.heads));
  if (o.heads % o.kv_groups != 0)
    throw UsageError("--heads " + std::to_string(o.heads) + " is not divisible by --kv-groups " +
                     std::to_string(o.kv_groups));
  if (o.decode) return;  // decoding reads caches of --cache tokens; no (T, T) matrix is made
  check_elements("mha's (batch, heads, tokens, tokens) scores", {o.batch, o.heads, o.tokens, o.tokens});
}

}  // namespace attn
