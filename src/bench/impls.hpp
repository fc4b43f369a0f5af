#pragma once
// attn bench's implementations as attn-bench runs them and the tests check them: the modules they share and
// one entry per line of ATTN_BENCH_IMPLS (cli/bench_options.hpp), with its run function. Apart from
// bench.cpp because the tests link this file and not attn-bench's process-wide settings (the allocation
// counter, mallopt).
#include <vector>

#include "cli/bench_options.hpp"
#include "modules/attention.hpp"

namespace attn {

// The benchmark's modules: one GroupedQueryAttention drawn after torch.manual_seed(123), and a
// MultiHeadAttention and a wrapper holding the same weights (each head's key/value rows those of its
// group), so that all implementations compute one function; x (B, T, C) is torch.rand after manual_seed(0).
struct BenchModules {
  GroupedQueryAttention gqa;
  MultiHeadAttention mha;
  MultiHeadAttentionWrapper wrapper;
  Tensor3 x;  // (B, T, C)
};
BenchModules make_bench_modules(const BenchOptions& options);

// Useful work in GFLOP: the projections, out_proj and the causal half of attention (the masked half is work
// a good kernel skips). mha's is also the wrapper's and fused's; gqa's key/value projections are narrower.
double mha_gflop(const BenchOptions& options);
double gqa_gflop(const BenchOptions& options);

struct BenchImpl {
  const char* name;
  const char* help;                                     // "{kv_groups}" for the number (fill_impl_help)
  double (*gflop)(const BenchOptions&);                 // its useful work
  Tensor3 (*run)(const BenchModules&, unsigned threads);  // x (B, T, C) -> (B, T, C), after out_proj
  double max_nmse;                                      // its bound against the chapter's step-by-step pass
};
// ATTN_BENCH_IMPLS, every field, in its order.
const std::vector<BenchImpl>& bench_impl_table();

}  // namespace attn
