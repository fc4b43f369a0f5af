#include "cli/bench_options.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "kernels/vector_isa.hpp"

namespace attn {

std::string fill_impl_help(const std::string& help, const std::string& kv_groups) {
  return fmt::format(fmt::runtime(help), fmt::arg("kv_groups", kv_groups));
}
std::string bench_impls_help(std::size_t width) {
  struct Line {
    std::string name, help;
  };
#define ATTN_BENCH_IMPL_LINE(name, run, gflop, max_nmse, help) {#name, fill_impl_help(help, "--kv-groups")},
  const std::vector<Line> lines{ATTN_BENCH_IMPLS(ATTN_BENCH_IMPL_LINE)};
#undef ATTN_BENCH_IMPL_LINE
  std::size_t names = 0;
  for (const Line& l : lines) names = std::max(names, l.name.size());
  const std::string indent(2 + names + 2, ' ');
  std::string out;
  for (const Line& l : lines) {
    const std::string first = "  " + l.name + std::string(names - l.name.size() + 2, ' ');
    if (width == 0) {
      out += first + l.help + "\n";
      continue;
    }
    const auto parts = wrap_words(l.help, width - indent.size());
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? first : indent) + parts[i] + "\n";
  }
  return out;
}

std::optional<std::string> isa_refusal(const std::string& isa, VectorIsa widest) {
  const std::optional<VectorIsa> build = isa_named(isa);
  if (!build || runs_on(*build, widest)) return std::nullopt;
  return "--isa " + isa + ": this CPU cannot run it (its widest build is " + isa_name(widest) + ")";
}

void check_bench(const BenchOptions& o) {
  if (const auto refusal = isa_refusal(o.isa, best_vector_isa())) throw UsageError(*refusal);
  if (o.dim % o.heads != 0)
    throw UsageError("--dim " + std::to_string(o.dim) + " is not divisible by --heads " + std::to_string(o.heads));
  if (o.heads % o.kv_groups != 0)
    throw UsageError("--heads " + std::to_string(o.heads) + " is not divisible by --kv-groups " +
                     std::to_string(o.kv_groups));
  if (o.decode) return;  // decoding reads caches of --cache tokens; no (T, T) matrix is made
  check_elements("mha's (batch, heads, tokens, tokens) scores", {o.batch, o.heads, o.tokens, o.tokens});
}

}  // namespace attn
