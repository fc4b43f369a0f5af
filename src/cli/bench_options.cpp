#include "cli/bench_options.hpp"

#include "core/errors.hpp"
#include "core/limits.hpp"

namespace attn {

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
