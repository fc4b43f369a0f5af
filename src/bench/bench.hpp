#pragma once
// attn bench: the chapter's multi-head attention implementations at GPT-2 size, timed on this machine.
// Only the attn-bench program (bench/main.cpp) links this: it changes process-wide settings as it runs.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/options.hpp"

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

// Runs every implementation on the same weights and inputs; `progress` gets a line per finished row.
BenchReport run_bench(const BenchOptions& options, const std::function<void(const std::string&)>& progress);

std::string render_bench_text(const BenchReport& report);
nlohmann::ordered_json bench_json(const BenchReport& report);

}  // namespace attn
