#include "cli/bench_options.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "io/cpus.hpp"
#include "kernels/vector_isa.hpp"
#include "modules/attention.hpp"

namespace attn {

std::string fill_impl_help(const std::string& help, const std::string& kv_groups) {
  return fmt::format(fmt::runtime(help), fmt::arg("kv_groups", kv_groups));
}
std::string bench_impls_help(std::size_t width) {
  struct Line {
    std::string name, help;
  };
#define ATTN_BENCH_IMPL_LINE(name, run, gflop, floats, max_nmse, help) {#name, fill_impl_help(help, "--kv-groups")},
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

double decode_pool_bytes(std::size_t llc_bytes, std::size_t max_memory) {
  const double wanted = std::max(double(1u << 30), 4.0 * static_cast<double>(llc_bytes));
  const double room = std::max(double(1u << 30), (static_cast<double>(max_memory) - static_cast<double>(kBaseBytes)) / 2);
  return std::min(wanted, room);
}

std::size_t decode_layers(std::size_t layer_floats, double pool_bytes) {
  const double bytes = 2.0 * static_cast<double>(layer_floats * sizeof(float));  // keys and values
  return std::min(kMaxDecodeLayers, static_cast<std::size_t>(std::ceil(pool_bytes / bytes)));
}

namespace {

// Calls f(layer_floats, layers) for each of --decode's rows: every cache length, mha's row then gqa's.
template <class F>
void for_each_decode_row(const BenchOptions& o, const std::vector<std::size_t>& caches, double pool_bytes, F f) {
  for (const std::size_t T : caches)
    for (const std::size_t kv : {o.heads, o.kv_groups}) {
      // (T, kv, head_dim): at most 1M x 1024 x 4096 floats (2^42), far from overflowing
      const std::size_t layer = T * kv * (o.dim / o.heads);
      f(layer, decode_layers(layer, pool_bytes));
    }
}

}  // namespace

std::size_t decode_pool_floats(const BenchOptions& o, const std::vector<std::size_t>& caches, double pool_bytes) {
  std::size_t pool = 0;
  for_each_decode_row(o, caches, pool_bytes, [&](std::size_t layer, std::size_t layers) { pool = std::max(pool, layers * layer); });
  return pool;
}

namespace {

// The floats one run of each implementation makes on the way, its output included (ATTN_BENCH_IMPLS' floats),
// from the shapes alone: what the budget counts, an upper bound of the peak_MB the bench reports.
// mha: queries, keys, values, the heads' context, out_proj's output, and the (B, heads, T, T) scores.
std::size_t mha_floats(const BenchOptions& o) {
  return saturating_sum(saturating_product({5, o.batch, o.tokens, o.dim}),
                        saturating_product({o.batch, o.heads, o.tokens, o.tokens}));
}
// wrapper: every head's pass, kept until they are concatenated, then the concatenation and out_proj's output.
std::size_t wrapper_floats(const BenchOptions& o) {
  const std::size_t pass = CausalAttention::pass_numbers(o.batch, o.tokens, o.dim / o.heads);
  return saturating_sum(saturating_product({o.heads, pass}), saturating_product({2, o.batch, o.tokens, o.dim}));
}
// fused and gqa: the projections, the packed keys and values, the context and the output, and per thread a
// few tiles of scratch (and oneDNN's buffers: 1.6 MiB a thread measured, 4 MiB counted).
std::size_t fused_floats(const BenchOptions& o) {
  constexpr std::size_t kScratchFloats = std::size_t{1} << 20;
  return saturating_sum(saturating_product({7, o.batch, o.tokens, o.dim}),
                        saturating_product({cpus_of_process(o.threads).threads, kScratchFloats}));
}

// Floats the forward bench holds at its peak: the modules (bench/impls.cpp: the GQA module, the MHA with its
// output bias, the wrapper's heads) and x and mha's output (the reference), kept throughout, and the most
// that one run makes on the way: mha's (always run, for the reference), each --impl chosen's, or the SGEMM of
// the machine's figures.
std::size_t forward_floats(const BenchOptions& o) {
  const std::size_t C = o.dim, kv_width = o.kv_groups * (C / o.heads);
  const std::size_t modules = saturating_sum(saturating_product({9, C, C}), saturating_product({2, kv_width, C}) + C);
  std::size_t most = mha_floats(o);
  const auto chosen = [&](const char* name) {
    return std::find(o.impls.begin(), o.impls.end(), name) != o.impls.end();
  };
#define ATTN_BENCH_IMPL_FLOATS(name, run, gflop, floats, max_nmse, help) \
  if (chosen(#name)) most = std::max(most, floats(o));
  ATTN_BENCH_IMPLS(ATTN_BENCH_IMPL_FLOATS)
#undef ATTN_BENCH_IMPL_FLOATS
  if (!o.quick) most = std::max(most, 3 * kSgemmSide * kSgemmSide);
  return saturating_sum(saturating_sum(modules, saturating_product({2, o.batch, o.tokens, C})), most);
}

// Floats --decode holds at its peak for `caches`: its two pools and the queries of its most layers, or the
// copy's two arrays, which are freed before the pools are made.
std::size_t decode_floats(const BenchOptions& o, const std::vector<std::size_t>& caches, std::size_t llc_bytes) {
  const double pool_bytes = decode_pool_bytes(llc_bytes, o.max_memory);
  std::size_t queries = 0;
  for_each_decode_row(o, caches, pool_bytes, [&](std::size_t, std::size_t layers) {
    queries = std::max(queries, saturating_product({layers, o.dim}));
  });
  const std::size_t rows = saturating_sum(saturating_product({2, decode_pool_floats(o, caches, pool_bytes)}),
                                          saturating_sum(queries, 2 * o.dim));
  return o.quick ? rows : std::max(rows, std::max(2 * kCopyFloats, 3 * kSgemmSide * kSgemmSide));
}

}  // namespace

std::vector<std::size_t> decode_cache_lengths(const BenchOptions& o, std::size_t llc_bytes) {
  std::vector<std::size_t> caches = o.cache;
  if (o.quick || caches != bench_cache_sizes() || llc_bytes == 0) return caches;
  // gqa's layer, the smaller: 2 (keys, values) x T x kv_groups x head_dim floats.
  const auto layer_bytes = [&](std::size_t T) { return 2.0 * double(T) * double(o.kv_groups * (o.dim / o.heads)) * 4.0; };
  std::size_t T = caches.back();
  if (layer_bytes(T) > static_cast<double>(llc_bytes)) return caches;  // the default list already goes past it
  while (layer_bytes(T) <= static_cast<double>(llc_bytes) && T < kMaxBeyondLlcCache) T *= 2;
  if (layer_bytes(T) <= static_cast<double>(llc_bytes)) return caches;
  std::vector<std::size_t> more = caches;
  more.push_back(T);
  // Only where the budget allows it: the default run is never refused for a row it was not asked for.
  const std::size_t bytes = saturating_sum(kBaseBytes, saturating_product({decode_floats(o, more, llc_bytes), sizeof(float)}));
  return bytes <= o.max_memory ? more : caches;
}

std::size_t bench_memory_bytes(const BenchOptions& o) {
  // The forward bench does not depend on the cache: sysfs is read for --decode alone.
  return bench_memory_bytes(o, o.decode ? last_level_cache_of_process().bytes : 0);
}

std::size_t bench_memory_bytes(const BenchOptions& o, std::size_t llc) {
  const std::size_t floats = o.decode ? decode_floats(o, decode_cache_lengths(o, llc), llc) : forward_floats(o);
  return saturating_sum(kBaseBytes, saturating_product({floats, sizeof(float)}));
}

void check_bench(const BenchOptions& o) {
  if (const auto refusal = isa_refusal(o.isa, best_vector_isa())) throw UsageError(*refusal);
  if (o.dim % o.heads != 0)
    throw UsageError("--dim " + std::to_string(o.dim) + " is not divisible by --heads " + std::to_string(o.heads));
  if (o.heads % o.kv_groups != 0)
    throw UsageError("--heads " + std::to_string(o.heads) + " is not divisible by --kv-groups " +
                     std::to_string(o.kv_groups));
  // Decoding reads caches of --cache tokens; no (T, T) matrix is made.
  if (!o.decode) check_elements("mha's (batch, heads, tokens, tokens) scores", {o.batch, o.heads, o.tokens, o.tokens});
  check_budget("bench", bench_memory_bytes(o), o.max_memory);
}

}  // namespace attn
