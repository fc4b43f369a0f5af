#pragma once
// attn bench: the chapter's multi-head attention implementations at GPT-2 size, timed on this machine.
// Only the attn-bench program (bench/main.cpp) links this: it changes process-wide settings as it runs.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/options.hpp"
#include "core/attention.hpp"

namespace attn {

struct BenchRow {
  std::string impl;
  std::string what;
  double median_s = 0;
  double gflops = 0;          // useful work / median time
  double sgemm_percent = 0;   // gflops / the machine's SGEMM rate
  double peak_mb = 0;         // resident memory added at the peak of one run
  double max_abs_diff = 0;    // against mha's output
  std::vector<double> times;  // every timed run, seconds
};

struct BenchReport {
  BenchOptions options;
  unsigned threads = 0;
  double sgemm_gflops = 0;
  double useful_gflop_mha = 0;  // projections + out_proj + causal attention
  double useful_gflop_gqa = 0;
  std::vector<BenchRow> rows;
};

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

// attn-bench --dump DIR: x, the weights (nn.Linear's (out, in) layout, no biases) and the chapter's outputs
// of mha and gqa as .npy files, for checking another runtime's graphs (scripts/bench-ort.sh).
void dump_bench(const BenchOptions& options, const std::string& dir);

// Runs every implementation on the same weights and inputs; `progress` gets a line per finished row.
BenchReport run_bench(const BenchOptions& options, const std::function<void(const std::string&)>& progress);

std::string render_bench_text(const BenchReport& report);
nlohmann::ordered_json bench_json(const BenchReport& report);

}  // namespace attn
