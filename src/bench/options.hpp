#pragma once
// What `attn bench` is asked to time, shared by the command line (which validates it) and the attn-bench
// program (which runs it).
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

// The implementations, in the order they run.
inline std::vector<std::string> bench_impls() { return {"wrapper", "mha", "fused", "gqa"}; }

struct BenchOptions {
  std::size_t batch = 8;
  std::size_t tokens = 1024;
  std::size_t dim = 768;
  std::size_t heads = 12;
  std::size_t kv_groups = 4;
  std::size_t repeats = 5;
  std::vector<std::string> impls = bench_impls();
};

// Refuses, with a UsageError, a shape the implementations cannot run or that is past the limits.
void check_bench(const BenchOptions& options);

}  // namespace attn
