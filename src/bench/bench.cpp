// attn bench: causal multi-head self-attention forward, float32, for four implementations of the same
// weights: the chapter's wrapper (one CausalAttention per head), the chapter's MultiHeadAttention (heads
// as strided views, the full (B, heads, T, T) scores), the fused tiled kernel, and grouped-query
// attention on the fused kernel. Median wall time after a warm-up, useful GFLOP/s (causal work only),
// share of the machine's SGEMM rate (measured here), peak memory added, and agreement with mha.
#include "bench/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <malloc.h>

#include <cblas.h>
#include <xtensor/xmath.hpp>
#include <xtensor/xnpy.hpp>

#include "bench/alloc_counter.hpp"
#include "core/attention.hpp"
#include "core/errors.hpp"
#include "core/kernels.hpp"

namespace attn {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The machine's SGEMM rate: a 2048^3 product, median of 5 after a warm-up, all BLAS threads.
double measure_sgemm_gflops() {
  const int n = 2048;
  std::vector<float> a(static_cast<std::size_t>(n) * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  std::vector<double> times;
  for (int r = 0; r < 6; ++r) {
    const auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    if (r > 0) times.push_back(seconds_since(t0));
  }
  return 2.0 * n * static_cast<double>(n) * n / median(times) / 1e9;
}

// Copies rows [first, first + count) of a layer's weight.
Matrix weight_rows(const Linear& layer, std::size_t first, std::size_t count) {
  Matrix w = xt::view(layer.weight, xt::range(first, first + count), xt::all());
  return w;
}

}  // namespace

BenchModules make_bench_modules(const BenchOptions& o) {
  const std::size_t B = o.batch, T = o.tokens, C = o.dim, H = o.heads, KV = o.kv_groups, hd = C / H;
  // Weights: a GroupedQueryAttention drawn after torch.manual_seed(123); the MultiHeadAttention gets its
  // query and output weights and, for every head, the key/value weights of that head's group, so all
  // four implementations compute the same function and can be compared number for number.
  TorchGenerator gen(123);
  BenchModules m{GroupedQueryAttention(C, C, 0.0, H, KV, false, gen), MultiHeadAttention(C, C, 0.0, H, false, gen),
                 MultiHeadAttentionWrapper(C, hd, 0.0, H, false, gen), Tensor3()};
  m.mha.W_query = m.gqa.W_query;
  m.mha.out_proj.weight = m.gqa.out_proj.weight;
  m.mha.out_proj.bias.fill(0.0f);
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = h / (H / KV);
    xt::view(m.mha.W_key.weight, xt::range(h * hd, (h + 1) * hd), xt::all()) = weight_rows(m.gqa.W_key, g * hd, hd);
    xt::view(m.mha.W_value.weight, xt::range(h * hd, (h + 1) * hd), xt::all()) =
        weight_rows(m.gqa.W_value, g * hd, hd);
  }
  // The wrapper's heads: head h owns rows h*hd.. of each projection, concatenated, then the same out_proj.
  for (std::size_t h = 0; h < H; ++h) {
    m.wrapper.heads[h].W_query.weight = weight_rows(m.mha.W_query, h * hd, hd);
    m.wrapper.heads[h].W_key.weight = weight_rows(m.mha.W_key, h * hd, hd);
    m.wrapper.heads[h].W_value.weight = weight_rows(m.mha.W_value, h * hd, hd);
  }
  m.x = xt::empty<float>({B, T, C});  // (B, T, C): torch.rand after manual_seed(0)
  gen.manual_seed(0);
  for (auto& v : m.x) v = gen.uniform(0.0f, 1.0f);
  return m;
}

void dump_bench(const BenchOptions& o, const std::string& dir) {
  const BenchModules m = make_bench_modules(o);
  TorchGenerator gen(0);
  const auto write = [&](const std::string& name, const auto& array) {
    const std::string path = dir + "/" + name + ".npy";
    std::ofstream f(path, std::ios::binary);
    f << xt::dump_npy(array);
    if (!f.flush()) throw SystemError("cannot write " + path + ": " + std::strerror(errno));
  };
  write("x", m.x);
  write("mha_w_query", m.mha.W_query.weight);
  write("mha_w_key", m.mha.W_key.weight);
  write("mha_w_value", m.mha.W_value.weight);
  write("out_proj", m.mha.out_proj.weight);
  write("gqa_w_query", m.gqa.W_query.weight);
  write("gqa_w_key", m.gqa.W_key.weight);
  write("gqa_w_value", m.gqa.W_value.weight);
  // The references: the chapter's arithmetic on one thread (attend(), every intermediate kept).
  write("mha_out", m.mha.attend(m.x, gen, DropoutRng::Default).context_vecs);
  write("gqa_out", m.gqa.attend(m.x, gen, DropoutRng::Default).context_vecs);
}

BenchReport run_bench(const BenchOptions& o, const std::function<void(const std::string&)>& progress) {
  // Keep freed memory for reuse, as PyTorch's allocators do, instead of glibc's default of handing every
  // block over 32 MB back to the kernel: a fresh (8, 1024, 2304) result would otherwise cost 18,000 page
  // faults per run, which on this kind of virtual machine is more time than the product itself.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  BenchReport report;
  report.options = o;
  report.threads = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t B = o.batch, T = o.tokens, C = o.dim, H = o.heads, KV = o.kv_groups, hd = C / H;

  const BenchModules m = make_bench_modules(o);
  const GroupedQueryAttention& gqa = m.gqa;
  const MultiHeadAttention& mha = m.mha;
  const MultiHeadAttentionWrapper& wrapper = m.wrapper;
  const Tensor3& x = m.x;  // (B, T, C)
  TorchGenerator gen(0);  // no implementation draws from it (dropout 0)

  const AttentionShape shape{B, T, H, H, hd};
  const double attention = causal_attention_flops(shape);
  const double bt = static_cast<double>(B * T);
  report.useful_gflop_mha = (2.0 * bt * C * 3.0 * C + 2.0 * bt * C * C + attention) / 1e9;
  report.useful_gflop_gqa = (2.0 * bt * C * (C + 2.0 * KV * hd) + 2.0 * bt * C * C + attention) / 1e9;
  report.sgemm_gflops = measure_sgemm_gflops();

  const unsigned threads = report.threads;
  struct Impl {
    std::string name, what;
    double gflop;
    std::function<Tensor3()> run;
  };
  const std::vector<Impl> impls{
      {"wrapper", "MultiHeadAttentionWrapper: a CausalAttention per head, then out_proj", report.useful_gflop_mha,
       [&] {
         Tensor3 heads = wrapper.forward(x, gen, DropoutRng::Default);  // (B, T, C)
         return mha.out_proj.forward(heads);
       }},
      {"mha", "MultiHeadAttention: heads as strided views, full (B, h, T, T) scores", report.useful_gflop_mha,
       [&] { return mha.forward(x, gen, DropoutRng::Default, threads); }},
      {"fused", "MultiHeadAttention on the fused kernel: tiles, online softmax", report.useful_gflop_mha,
       [&] { return mha.forward_fused(x, threads); }},
      {"gqa", "GroupedQueryAttention (" + std::to_string(KV) + " key/value heads) on the fused kernel",
       report.useful_gflop_gqa, [&] { return gqa.forward(x, gen, DropoutRng::Default, threads); }},
  };

  const Tensor3 reference = mha.forward(x, gen, DropoutRng::Default, threads);  // (B, T, C)
  for (const auto& impl : impls) {
    if (std::find(o.impls.begin(), o.impls.end(), impl.name) == o.impls.end()) continue;
    BenchRow row;
    row.impl = impl.name;
    row.what = impl.what;
    const std::size_t live_before = alloc_counter::reset_peak();
    const Tensor3 out = impl.run();  // warm-up, and the output checked against mha
    row.peak_mb = static_cast<double>(alloc_counter::peak() - live_before) / (1024.0 * 1024.0);
    row.max_abs_diff = xt::amax(xt::abs(out - reference))();
    for (std::size_t r = 0; r < o.repeats; ++r) {
      const auto t0 = Clock::now();
      const Tensor3 timed = impl.run();
      row.times.push_back(seconds_since(t0));
    }
    row.median_s = median(row.times);
    row.gflops = impl.gflop / row.median_s;
    row.sgemm_percent = 100.0 * row.gflops / report.sgemm_gflops;
    report.rows.push_back(row);
    if (progress) progress(impl.name);
  }
  return report;
}

std::string render_bench_text(const BenchReport& r) {
  const BenchOptions& o = r.options;
  char buf[256];
  std::string out = "attn bench -- causal multi-head self-attention forward, float32\n";
  std::snprintf(buf, sizeof buf, "shape: batch %zu x %zu tokens x %zu dims x %zu heads (head_dim %zu); gqa with %zu key/value heads\n",
                o.batch, o.tokens, o.dim, o.heads, o.dim / o.heads, o.kv_groups);
  out += buf;
  std::snprintf(buf, sizeof buf, "machine: %u threads, SGEMM %.1f GFLOP/s (2048^3, median of 5)\n", r.threads,
                r.sgemm_gflops);
  out += buf;
  std::snprintf(buf, sizeof buf,
                "useful work: %.4g GFLOP (mha; projections, out_proj and the causal half of attention), gqa %.4g\n",
                r.useful_gflop_mha, r.useful_gflop_gqa);
  out += buf;
  std::snprintf(buf, sizeof buf, "median of %zu runs after a warm-up\n\n", o.repeats);
  out += buf;
  std::snprintf(buf, sizeof buf, "%-8s %10s %9s %8s %10s %12s\n", "impl", "median_ms", "GFLOP/s", "%SGEMM", "peak_MB",
                "max|diff|");
  out += buf;
  for (const auto& row : r.rows) {
    std::snprintf(buf, sizeof buf, "%-8s %10.3f %9.1f %7.1f%% %10.1f %12.2e\n", row.impl.c_str(), row.median_s * 1e3,
                  row.gflops, row.sgemm_percent, row.peak_mb, row.max_abs_diff);
    out += buf;
  }
  out += "\n";
  for (const auto& row : r.rows) out += "  " + row.impl + ": " + row.what + "\n";
  const auto find = [&](const std::string& name) -> const BenchRow* {
    for (const auto& row : r.rows)
      if (row.impl == name) return &row;
    return nullptr;
  };
  const BenchRow* fused = find("fused");
  if (fused != nullptr) {
    out += "\n";
    for (const char* other : {"wrapper", "mha", "gqa"}) {
      const BenchRow* o2 = find(other);
      if (o2 == nullptr) continue;
      const bool fused_faster = fused->median_s <= o2->median_s;
      std::snprintf(buf, sizeof buf, "%s is %.2fx faster than %s\n", fused_faster ? "fused" : other,
                    fused_faster ? o2->median_s / fused->median_s : fused->median_s / o2->median_s,
                    fused_faster ? other : "fused");
      out += buf;
    }
  }
  return out;
}

nlohmann::ordered_json bench_json(const BenchReport& r) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = 1;
  doc["lesson"] = "bench";
  doc["config"] = {{"batch", r.options.batch}, {"tokens", r.options.tokens}, {"dim", r.options.dim},
                   {"heads", r.options.heads}, {"kv_groups", r.options.kv_groups}, {"repeats", r.options.repeats}};
  doc["machine"] = {{"threads", r.threads}, {"sgemm_gflops", r.sgemm_gflops}};
  doc["useful_gflop"] = {{"mha", r.useful_gflop_mha}, {"gqa", r.useful_gflop_gqa}};
  doc["results"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows)
    doc["results"].push_back({{"impl", row.impl},
                              {"what", row.what},
                              {"median_s", row.median_s},
                              {"gflops", row.gflops},
                              {"sgemm_percent", row.sgemm_percent},
                              {"peak_mb", row.peak_mb},
                              {"max_abs_diff", row.max_abs_diff},
                              {"times_s", row.times}});
  return doc;
}

}  // namespace attn
