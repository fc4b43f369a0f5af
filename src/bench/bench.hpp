#pragma once
// attn bench: the chapter's multi-head attention implementations at GPT-2 size, timed on this machine.
// Only the attn-bench program (bench/main.cpp) links this: it changes process-wide settings as it runs.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/impls.hpp"
#include "bench/spread.hpp"
#include "cli/bench_options.hpp"
#include "io/cpus.hpp"

namespace attn {

struct BenchRow {
  std::string impl;
  std::string what;
  TimeRange time;             // the timed runs' min, median and max, seconds
  double gflops = 0;          // useful work / median time
  double sgemm_percent = 0;   // gflops / the machine's SGEMM rate (oneDNN's); 0 when not measured (--quick)
  double peak_percent = 0;    // gflops / the machine's FMA peak; 0 when not measured
  double peak_mb = 0;         // resident memory added at the peak of one run
  double max_abs_diff = 0;    // against mha's output
  std::vector<double> times;  // every timed run, seconds
};

// What the machine can do, measured in the same run as the implementations (the rates are 0, and
// `measured` false, under --quick, which skips those seconds).
struct MachineReport {
  bool measured = false;          // the rates below were measured
  unsigned threads = 0;           // the CPUs attn may use (io/cpus.hpp), which every implementation runs on
  std::string threads_from;       // what set it: "affinity mask", "cgroup quota", "OMP_NUM_THREADS", "--threads"
  std::string isa;                // the fast kernels' build: the CPU's widest, or --isa's
  std::string cpu_isa;            // the widest build the CPU's feature flags allow
  std::size_t mr = 0, nr = 0;     // its micro-kernel's register block
  double fma_peak_gflops = 0;     // that build's FMA chains on every thread: the arithmetic peak
  double sgemm_gflops = 0;        // oneDNN's SGEMM (the fast implementations' projections), 2048^3
  std::string onednn_isa;         // the instruction set of oneDNN's kernels (onednn_isa())
  double openblas_gflops = 0;     // OpenBLAS's SGEMM (the lessons' and mha's), 2048^3
  std::string openblas_core;      // the kernels OpenBLAS chose (openblas_get_corename)
  std::string openblas_warning;   // what is wrong with them, if anything (openblas_core_warning); empty: nothing
};
// The machine's threads (the CPUs given, below --threads) and kernel builds, and with `rates` its FMA peak
// and SGEMM rates; from now on the fast kernels, oneDNN and OpenBLAS run on those threads.
MachineReport describe_machine(const BenchOptions& options, bool rates);

struct BenchReport {
  BenchOptions options;
  MachineReport machine;
  unsigned threads = 0;
  double sgemm_gflops = 0;
  double useful_gflop_mha = 0;  // projections + out_proj + causal attention
  double useful_gflop_gqa = 0;
  std::vector<BenchRow> rows;
};

// attn-bench --dump DIR: x, the weights (nn.Linear's (out, in) layout, no biases) and the chapter's outputs
// of mha and gqa as .npy files, for checking another runtime's graphs (scripts/bench-ort.sh).
void dump_bench(const BenchOptions& options, const std::string& dir);

// Runs every implementation on the same weights and inputs; `progress` gets a line per finished row.
BenchReport run_bench(const BenchOptions& options, const std::function<void(const std::string&)>& progress);

std::string render_bench_text(const BenchReport& report);
nlohmann::ordered_json bench_json(const BenchReport& report);
// The rows' ranges, named as the busy-machine warning names them.
std::vector<NamedRange> bench_ranges(const BenchReport& report);

// attn bench --decode: one new token attending to KV caches of each --cache length, for MHA (--heads
// key/value heads) and GQA (--kv-groups), timed against the machine's memory bandwidth.
struct DecodeRow {
  std::string impl;                // "mha" or "gqa"
  std::size_t cache_tokens = 0;
  std::size_t kv_heads = 0;
  std::size_t layers = 0;          // caches read in turn, so each step reads its cache from memory
  TimeRange time;                  // one decode step of one layer: min, median and max over the sweeps
  double bytes = 0;                // cache bytes one step reads: its keys and values
  double gbps = 0;                 // bytes / median time
  double copy_percent = 0;         // gbps / the machine's copy bandwidth; 0 when not measured (--quick)
  double max_abs_diff = 0;         // against decode_attention_reference on layer 0
  bool fits_llc = false;           // one layer's cache fits in the last-level cache: copy_percent is no claim
  std::vector<double> times;       // every timed sweep, per step
};
struct DecodeReport {
  BenchOptions options;
  MachineReport machine;
  double copy_gbps = 0;            // a STREAM-like copy on every thread: 2 x bytes copied / time (0: --quick)
  double pool_bytes = 0;           // the cache memory each row cycles through
  LastLevelCache llc;              // the CPUs' last-level cache (io/cpus.hpp)
  std::vector<std::size_t> caches; // the lengths timed (decode_cache_lengths)
  std::vector<DecodeRow> rows;
};
DecodeReport run_decode_bench(const BenchOptions& options, const std::function<void(const std::string&)>& progress);
std::string render_decode_text(const DecodeReport& report);
nlohmann::ordered_json decode_json(const DecodeReport& report);
std::vector<NamedRange> decode_ranges(const DecodeReport& report);

}  // namespace attn
