#pragma once
// What `attn bench` is asked to time, shared by the command line (which validates it) and the attn-bench
// program (which runs it).
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

// The implementations, in the order they run.
inline std::vector<std::string> bench_impls() { return {"wrapper", "mha", "fused", "gqa"}; }

// The KV cache lengths `attn bench --decode` times by default: 1k, 8k and 32k tokens.
inline std::vector<std::size_t> bench_cache_sizes() { return {1024, 8192, 32768}; }
// The longest cache --decode takes: 128k tokens (GPT-2 small's MHA layer then holds 768 MiB of keys and values).
inline constexpr std::size_t kMaxDecodeCache = 131072;

struct BenchOptions {
  std::size_t batch = 8;
  std::size_t tokens = 1024;
  std::size_t dim = 768;
  std::size_t heads = 12;
  std::size_t kv_groups = 4;
  std::size_t repeats = 5;
  std::vector<std::string> impls = bench_impls();
  bool decode = false;  // --decode: time decoding steps against KV caches instead
  std::vector<std::size_t> cache = bench_cache_sizes();  // --cache: the KV caches' lengths, in tokens
};

// Refuses, with a UsageError, a shape the implementations cannot run or that is past the limits.
void check_bench(const BenchOptions& options);

}  // namespace attn
