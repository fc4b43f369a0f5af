#pragma once
// What `attn bench` is asked to time, shared by the command line (which validates it) and the attn-bench
// program (which runs it).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/limits.hpp"
#include "kernels/vector_isa.hpp"

namespace attn {

// The implementations attn bench times, in the order they run: one line each,
//   X(name, run, gflop, floats, max_nmse, help)
//   name      what --impl takes and the report's "impl"
//   run       the function that runs it, Tensor3 run(const BenchModules&, unsigned threads), defined in
//             src/bench/impls.cpp beside the bench's modules
//   gflop     its useful work in GFLOP, double gflop(const BenchOptions&), also in src/bench/impls.cpp
//   floats    the most floats one run makes on the way, output included, std::size_t floats(const
//             BenchOptions&), in src/cli/bench_options.cpp: what attn bench's memory budget counts for it
//   max_nmse  the bound on the normalised mean squared error of its output against the chapter's
//             step-by-step pass (tests/test_kernels.cpp, which says how the bound was measured)
//   help      what it is: the report's "what" and --help's line, "{kv_groups}" standing for --kv-groups
// Adding an implementation is its run function and its line here (docs/architecture.md, "Recipes").
//
// An X-macro, as ATTN_LESSONS and ATTN_FORMATS are, because the two sides need different fields and link
// different libraries: attn validates --impl and prints the help (names and help only) and must not link
// attn_fast, where the fused kernel that some runs call lives; attn-bench and the tests expand every field
// (src/bench/impls.cpp). A macro's unused argument is never looked at, so run and gflop name functions that
// only exist where they are used, and floats ones that only attn's side has (it checks the budget before
// attn-bench starts). A table of structs here would drag those functions into attn.
#define ATTN_BENCH_IMPLS(X)                                                     \
  X(wrapper, run_wrapper, mha_gflop, wrapper_floats, 1e-9,                      \
    "MultiHeadAttentionWrapper: a CausalAttention per head, then out_proj")     \
  X(mha, run_mha, mha_gflop, mha_floats, 1e-9,                                  \
    "MultiHeadAttention: heads as strided views, full (B, h, T, T) scores")     \
  X(fused, run_fused, mha_gflop, fused_floats, 1e-9,                            \
    "MultiHeadAttention on the fused kernel: tiles, online softmax")            \
  X(gqa, run_gqa, gqa_gflop, fused_floats, 1e-9,                                \
    "GroupedQueryAttention ({kv_groups} key/value heads) on the fused kernel")

// The implementations' names, in the order they run.
inline std::vector<std::string> bench_impls() {
#define ATTN_BENCH_IMPL_NAME(name, run, gflop, floats, max_nmse, help) #name,
  return {ATTN_BENCH_IMPLS(ATTN_BENCH_IMPL_NAME)};
#undef ATTN_BENCH_IMPL_NAME
}
// An implementation's help with "{kv_groups}" filled in: by the number in a report, by "--kv-groups" in
// --help.
std::string fill_impl_help(const std::string& help, const std::string& kv_groups);
// `attn bench --help`'s list: "  NAME  HELP" per implementation, the names padded to one width, each help
// wrapped under its name to `width` columns (0: not wrapped).
std::string bench_impls_help(std::size_t width = 0);

// The KV cache lengths `attn bench --decode` times by default: 1k, 8k and 32k tokens.
inline std::vector<std::size_t> bench_cache_sizes() { return {1024, 8192, 32768}; }
// The longest cache --decode takes: 128k tokens (GPT-2 small's MHA layer then holds 768 MiB of keys and values).
// The length decode_cache_lengths adds past a large last-level cache may be longer (kMaxBeyondLlcCache).
inline constexpr std::size_t kMaxDecodeCache = 131072;

// What --decode's rows read: each row cycles through `layers` caches of keys and as many of values, one per
// "layer", each `layer_floats` (T, kv_heads, head_dim), so that a step finds its cache in memory as a real
// model's layers do (each layer's cache was last read a whole forward pass ago): together at least
// decode_pool_bytes(), and at most kMaxDecodeLayers (a cache of a few dozen tokens would otherwise take
// millions of calls to fill the pool; those fit in the CPU's caches whatever is done). The bench allocates
// one pool of keys and one of values for its largest row.
inline constexpr std::size_t kMaxDecodeLayers = 4096;
// 1 GiB, or four times the last-level cache (io/cpus.hpp) if that is more: an LLC's replacement is not
// plain LRU, so a cycle only a little larger than the cache may keep part of itself there. At most half of
// --max-memory above the process's base (and at least 1 GiB), so that a machine with gigabytes of LLC (two
// sockets of Milan-X) is not refused the default run: the report then says the pool is smaller.
double decode_pool_bytes(std::size_t llc_bytes, std::size_t max_memory);
std::size_t decode_layers(std::size_t layer_floats, double pool_bytes);

// What the machine's figures take, unless --quick: a 2048^3 SGEMM (three matrices of kSgemmSide^2 floats)
// and, with --decode, a STREAM-like copy between two arrays of kCopyFloats floats (256 MiB each).
inline constexpr std::size_t kSgemmSide = 2048;
inline constexpr std::size_t kCopyFloats = std::size_t{64} << 20;

struct BenchOptions {
  std::size_t batch = 8;
  std::size_t tokens = 1024;
  std::size_t dim = 768;
  std::size_t heads = 12;
  std::size_t kv_groups = 4;
  std::size_t repeats = 5;
  std::vector<std::string> impls = bench_impls();
  bool decode = false;  // --decode: time decoding steps against KV caches instead
  bool quick = false;   // --quick: measure no machine figures, warm up with one run, short decode sweeps
  std::vector<std::size_t> cache = bench_cache_sizes();  // --cache: the KV caches' lengths, in tokens
  std::string isa;      // --isa: the fast kernels' build ("avx512", "avx2", "portable"); empty: the CPU's widest
  std::size_t max_memory = kDefaultMemoryBudget;  // --max-memory: the run refused past it, on bench_memory_bytes
  std::optional<std::size_t> threads;  // --threads: at most this many (io/cpus.hpp); none: the CPUs given
};

// The builds --isa takes, widest first.
inline std::vector<std::string> bench_isas() {
  return {isa_name(VectorIsa::Avx512), isa_name(VectorIsa::Avx2), isa_name(VectorIsa::Scalar)};
}

// The usage error for an --isa build that a CPU whose widest build is `widest` cannot run; none for a build
// it runs, or no --isa.
std::optional<std::string> isa_refusal(const std::string& isa, VectorIsa widest);

// The floats of each of --decode's two pools (keys, values), which every row's layers come from: its largest
// row's, among `caches`.
std::size_t decode_pool_floats(const BenchOptions& o, const std::vector<std::size_t>& caches, double pool_bytes);

// The cache lengths --decode times: --cache's; and with the default list (no --cache, or --cache giving
// that list), without --quick, when no length of
// the default list makes gqa's one layer of keys and values larger than the last-level cache, also the
// shortest power of two that does (up to kMaxBeyondLlcCache, and only where --max-memory allows it), so that
// one row at least reads a cache that no cache of the CPU can hold.
std::vector<std::size_t> decode_cache_lengths(const BenchOptions& o, std::size_t llc_bytes);
inline constexpr std::size_t kMaxBeyondLlcCache = std::size_t{1} << 20;

// The memory attn-bench would need at its peak for `options`, estimated from them alone: an upper bound of
// the process's base, the modules and their input (or the decode caches), the largest of what one run of an
// implementation (or the machine's figures) makes on the way, and per thread the fused kernel's scratch.
// For a shape the implementations can run (check_bench's first checks).
std::size_t bench_memory_bytes(const BenchOptions& options);
// The same on a machine whose last-level cache is `llc_bytes` (--decode's pool and rows depend on it).
std::size_t bench_memory_bytes(const BenchOptions& options, std::size_t llc_bytes);

// Refuses, with a UsageError, a shape the implementations cannot run or that is past the limits, an --isa
// build this CPU cannot run, and a run whose estimated memory is past --max-memory: before anything is
// allocated, as the lessons' budget is checked on their plan.
void check_bench(const BenchOptions& options);

}  // namespace attn
