// attn bench: causal multi-head self-attention forward, float32, for every implementation of
// ATTN_BENCH_IMPLS (cli/bench_options.hpp; their runs in bench/impls.cpp) on the same weights: the
// chapter's wrapper and MultiHeadAttention, the fused tiled kernel, grouped-query attention on it. Median
// wall time after a warm-up and the range of the timed runs, useful GFLOP/s (causal work only), share of
// the machine's SGEMM rate and FMA peak (measured here, unless --quick), peak memory added, and agreement
// with mha. What the ranges allow it to say (bench/spread.hpp) is said only where they allow it.
#include "bench/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>

#include <malloc.h>

#include <cblas.h>
#include <fmt/format.h>
#include <xtensor/xmath.hpp>
#include <xtensor/xnpy.hpp>

#include "bench/alloc_counter.hpp"
#include "modules/attention.hpp"
#include "core/errors.hpp"
#include "io/cpus.hpp"
#include "kernels/blas.hpp"
#include "kernels/fast.hpp"
#include "kernels/kernels.hpp"
#include "kernels/threads.hpp"

namespace attn {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Runs `once` until a quarter of a second has gone by (at least once, at most 100 times). A single run was
// not enough at small shapes: on this kind of virtual machine the first parallel runs after the threads
// have idled can take 30 ms instead of 0.2 while the scheduler settles where they run. Under --quick it
// runs once: with none, the first timed decode sweep after the check took twice the others.
template <class F>
void warm_up(const BenchOptions& o, F once) {
  const auto t0 = Clock::now();
  for (int i = 0; i < (o.quick ? 1 : 100) && (i == 0 || seconds_since(t0) < 0.25); ++i) once();
}

// An SGEMM rate: a 2048^3 product, best of 5 after a warm-up. The best, as the copy bandwidth and the FMA
// peak take it: it is what the machine can do, and on a busy machine the median of 5 came out so low that
// the implementations measured after it ran at 224% of it.
template <class Product>
double measure_sgemm(Product product) {
  const std::size_t n = kSgemmSide;  // bench_memory_bytes counts its three matrices
  std::vector<float> a(n * n, 0.5f), b(a.size(), 0.25f), c(a.size());
  std::vector<double> times;
  for (int r = 0; r < 6; ++r) {
    const auto t0 = Clock::now();
    product(a.data(), b.data(), c.data(), n);
    if (r > 0) times.push_back(seconds_since(t0));
  }
  return 2.0 * static_cast<double>(n * n * n) / time_range(times).min_s / 1e9;
}

// --isa: the fast kernels' build and oneDNN's cap, set before anything calls oneDNN (which fixes its cap at
// the first call). check_bench has refused a build the CPU cannot run.
void choose_isa(const BenchOptions& o) {
  const std::optional<VectorIsa> isa = isa_named(o.isa);
  if (isa && !set_fast_isa(*isa)) throw SystemError("--isa " + o.isa + ": this CPU or oneDNN cannot run it");
}

}  // namespace

MachineReport describe_machine(const BenchOptions& o, bool rates) {
  MachineReport m;
  const CpuCount cpus = cpus_of_process(o.threads);  // not the machine's: the process's
  m.threads = cpus.threads;
  m.threads_from = cpus.source;
  set_fast_threads(m.threads);
  const VectorIsa isa = fast_vector_isa();
  const IsaInfo info = isa_info(isa);
  m.isa = info.name;
  m.cpu_isa = isa_name(best_vector_isa());
  m.onednn_isa = onednn_isa();
  m.mr = info.mr;
  m.nr = info.nr;
  m.openblas_core = openblas_core();
  m.openblas_warning = openblas_core_warning().value_or("");
  if (!rates) return m;  // --quick: about 1.5 s idle, and seconds more on a busy machine
  m.measured = true;
  m.fma_peak_gflops = fma_peak_gflops(isa, m.threads, 0.5);
  m.sgemm_gflops = measure_sgemm([](const float* a, const float* b, float* c, std::size_t n) {
    fast_linear(a, n, n, b, n, nullptr, c);  // a @ b.T: the same work as a @ b
  });
  m.openblas_gflops = measure_sgemm([](const float* a, const float* b, float* c, std::size_t n) {
    const int k = static_cast<int>(n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, k, k, k, 1.0f, a, k, b, k, 0.0f, c, k);
  });
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
  choose_isa(o);
  BenchReport report;
  report.options = o;

  const BenchModules m = make_bench_modules(o);
  report.useful_gflop_mha = mha_gflop(o);
  report.useful_gflop_gqa = gqa_gflop(o);
  report.machine = describe_machine(o, !o.quick);
  report.sgemm_gflops = report.machine.sgemm_gflops;

  report.threads = report.machine.threads;
  const unsigned threads = report.threads;
  TorchGenerator gen(0);  // mha's forward draws nothing from it (dropout 0)
  const Tensor3 reference = m.mha.forward(m.x, gen, DropoutRng::Default, threads);  // (B, T, C)
  std::vector<const BenchImpl*> impls;
  for (const BenchImpl& impl : bench_impl_table()) {
    if (std::find(o.impls.begin(), o.impls.end(), impl.name) == o.impls.end()) continue;
    impls.push_back(&impl);
    BenchRow row;
    row.impl = impl.name;
    row.what = fill_impl_help(impl.help, std::to_string(o.kv_groups));
    const std::size_t live_before = alloc_counter::reset_peak();
    const Tensor3 out = impl.run(m, threads);  // warm-up, and the output checked against mha
    row.peak_mb = static_cast<double>(alloc_counter::peak() - live_before) / (1024.0 * 1024.0);
    row.max_abs_diff = xt::amax(xt::abs(out - reference))();
    report.rows.push_back(row);
  }
  // Warmed up one after another, timed in rounds: each round runs every implementation once, in turn. Timed
  // row after row, another program's work lasting a few seconds slowed all five runs of one row alike, so
  // that its range stayed narrow and the bench claimed "fused is 1.67x faster than gqa" (1.28x slower on a
  // quiet machine); in rounds it slows one run of every row and widens their ranges instead.
  for (std::size_t i = 0; i < impls.size(); ++i) warm_up(o, [&] { const Tensor3 more = impls[i]->run(m, threads); });
  for (std::size_t r = 0; r < o.repeats; ++r)
    for (std::size_t i = 0; i < impls.size(); ++i) {
      const auto t0 = Clock::now();
      const Tensor3 timed = impls[i]->run(m, threads);
      report.rows[i].times.push_back(seconds_since(t0));
      if (r + 1 == o.repeats && progress) progress(impls[i]->name);
    }
  for (std::size_t i = 0; i < impls.size(); ++i) {
    BenchRow& row = report.rows[i];
    row.time = time_range(row.times);
    row.gflops = impls[i]->gflop(o) / row.time.median_s;
    if (report.machine.measured) {
      row.sgemm_percent = 100.0 * row.gflops / report.sgemm_gflops;
      row.peak_percent = 100.0 * row.gflops / report.machine.fma_peak_gflops;
    }
  }
  return report;
}

namespace {

// The line that says what is wrong with OpenBLAS's kernels, if anything.
std::string openblas_line(const MachineReport& m) {
  return m.openblas_warning.empty() ? std::string() : "warning: " + m.openblas_warning + "\n";
}

std::string render_machine(const MachineReport& m) {
  char buf[512];
  // "avx2 (6x16 micro-kernel)", and when --isa chose a narrower build than the CPU's widest:
  // "avx2 (6x16 micro-kernel; --isa's, the CPU's widest being avx512)".
  const std::string chosen = fmt::format("{} ({}x{} micro-kernel{})", m.isa, m.mr, m.nr,
                                         m.isa == m.cpu_isa ? std::string()
                                                            : "; --isa's, the CPU's widest being " +
                                                                  m.cpu_isa);
  if (!m.measured) {
    std::snprintf(buf, sizeof buf,
                  "machine: %u thread%s (%s); fast kernels: %s; oneDNN on its %s kernels; OpenBLAS on its %s kernels "
                  "(the chapter's)\n--quick: its FMA peak, SGEMM rates and memory bandwidth not measured, so no %% of them\n",
                  m.threads, m.threads == 1 ? "" : "s", m.threads_from.c_str(), chosen.c_str(), m.onednn_isa.c_str(), m.openblas_core.c_str());
    return buf + openblas_line(m);
  }
  std::snprintf(buf, sizeof buf,
                "machine: %u thread%s (%s); fast kernels: %s, FMA peak %.1f GFLOP/s (measured)\n"
                "SGEMM 2048^3: oneDNN %.1f GFLOP/s on its %s kernels (the fast projections); OpenBLAS %.1f GFLOP/s "
                "on its %s kernels (the chapter's)\n",
                m.threads, m.threads == 1 ? "" : "s", m.threads_from.c_str(), chosen.c_str(), m.fma_peak_gflops, m.sgemm_gflops, m.onednn_isa.c_str(), m.openblas_gflops,
                m.openblas_core.c_str());
  return buf + openblas_line(m);
}

// A figure of the machine's, or null where --quick did not measure it.
nlohmann::ordered_json measured(const MachineReport& m, double value) {
  return m.measured ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json machine_json(const MachineReport& m) {
  return {{"threads", m.threads},
          {"threads_from", m.threads_from},
          {"isa", m.isa},
          {"cpu_isa", m.cpu_isa},
          {"micro_kernel", {m.mr, m.nr}},
          {"fma_peak_gflops", measured(m, m.fma_peak_gflops)},
          {"sgemm_gflops", measured(m, m.sgemm_gflops)},
          {"onednn_isa", m.onednn_isa},
          {"openblas_sgemm_gflops", measured(m, m.openblas_gflops)},
          {"openblas_core", m.openblas_core},
          {"openblas_warning", m.openblas_warning.empty() ? nlohmann::ordered_json(nullptr)
                                                          : nlohmann::ordered_json(m.openblas_warning)}};
}

// A share of a machine figure for the text table: "  67.8%", or "-" where it was not measured.
std::string percent_cell(const MachineReport& m, double percent, int width) {
  char buf[32];
  if (m.measured)
    std::snprintf(buf, sizeof buf, "%*.1f%%", width - 1, percent);
  else
    std::snprintf(buf, sizeof buf, "%*s", width, "-");
  return buf;
}

// The range column: "min..max" in the unit of `scale` (1e3: ms, 1e6: us), padded to the widest.
std::vector<std::string> range_cells(const std::vector<TimeRange>& ranges, double scale, int decimals,
                                     const std::string& header) {
  std::vector<std::string> cells{header};
  char buf[96];
  for (const TimeRange& r : ranges) {
    std::snprintf(buf, sizeof buf, "%.*f..%.*f", decimals, r.min_s * scale, decimals, r.max_s * scale);
    cells.push_back(buf);
  }
  std::size_t width = 0;
  for (const auto& c : cells) width = std::max(width, c.size());
  for (auto& c : cells) c.insert(0, width - c.size(), ' ');
  return cells;
}

// A row's spread for the JSON: (max - min) / median, percent.
nlohmann::ordered_json range_json(const TimeRange& r) {
  return {{"median_s", r.median_s}, {"min_s", r.min_s}, {"max_s", r.max_s}, {"spread_percent", spread_percent(r)}};
}

}  // namespace

std::vector<NamedRange> bench_ranges(const BenchReport& r) {
  std::vector<NamedRange> ranges;
  for (const auto& row : r.rows) ranges.push_back({row.impl, row.time});
  return ranges;
}

namespace {

// What the ranges allow the bench to say: fused against every other implementation, in the report's order.
std::vector<std::string> bench_claims(const BenchReport& r) {
  std::vector<std::string> claims;
  const std::vector<NamedRange> ranges = bench_ranges(r);
  const auto fused = std::find_if(ranges.begin(), ranges.end(), [](const NamedRange& n) { return n.name == "fused"; });
  if (fused == ranges.end()) return claims;
  for (const NamedRange& other : ranges)
    if (other.name != fused->name)
      if (auto claim = speed_claim(*fused, other)) claims.push_back(*claim);
  return claims;
}

}  // namespace

std::string render_bench_text(const BenchReport& r) {
  const BenchOptions& o = r.options;
  char buf[256];
  std::string out = "attn bench -- causal multi-head self-attention forward, float32\n";
  std::snprintf(buf, sizeof buf, "shape: batch %zu x %zu tokens x %zu dims x %zu heads (head_dim %zu); gqa with %zu key/value heads\n",
                o.batch, o.tokens, o.dim, o.heads, o.dim / o.heads, o.kv_groups);
  out += buf;
  out += render_machine(r.machine);
  std::snprintf(buf, sizeof buf,
                "useful work: %.4g GFLOP (mha; projections, out_proj and the causal half of attention), gqa %.4g\n",
                r.useful_gflop_mha, r.useful_gflop_gqa);
  out += buf;
  std::snprintf(buf, sizeof buf, "median of %zu runs after %s; min..max: the fastest and the slowest of them\n\n",
                o.repeats, o.quick ? "two warm-up runs (--quick)" : "a warm-up");
  out += buf;
  std::vector<TimeRange> times;
  for (const auto& row : r.rows) times.push_back(row.time);
  const std::vector<std::string> ranges = range_cells(times, 1e3, 3, "min..max_ms");
  std::snprintf(buf, sizeof buf, "%-8s %10s  %s %9s %8s %8s %10s %12s\n", "impl", "median_ms", ranges[0].c_str(),
                "GFLOP/s", "%peak", "%SGEMM", "peak_MB", "max|diff|");
  out += buf;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const BenchRow& row = r.rows[i];
    std::snprintf(buf, sizeof buf, "%-8s %10.3f  %s %9.1f %s %s %10.1f %12.2e\n", row.impl.c_str(),
                  row.time.median_s * 1e3, ranges[i + 1].c_str(), row.gflops,
                  percent_cell(r.machine, row.peak_percent, 8).c_str(),
                  percent_cell(r.machine, row.sgemm_percent, 8).c_str(), row.peak_mb, row.max_abs_diff);
    out += buf;
  }
  out += "\n";
  for (const auto& row : r.rows) out += "  " + row.impl + ": " + row.what + "\n";
  const std::vector<std::string> claims = bench_claims(r);
  if (!claims.empty()) {
    out += "\nfaster only where the ranges do not overlap (the slower row's fastest run is slower than the faster's\n"
           "slowest); the ratio is of the medians:\n";
    for (const auto& claim : claims) out += claim + "\n";
  }
  return out;
}

nlohmann::ordered_json bench_json(const BenchReport& r) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = 1;
  doc["lesson"] = "bench";
  doc["config"] = {{"batch", r.options.batch}, {"tokens", r.options.tokens}, {"dim", r.options.dim},
                   {"heads", r.options.heads}, {"kv_groups", r.options.kv_groups}, {"repeats", r.options.repeats},
                   {"quick", r.options.quick}};
  doc["machine"] = machine_json(r.machine);
  doc["useful_gflop"] = {{"mha", r.useful_gflop_mha}, {"gqa", r.useful_gflop_gqa}};
  doc["results"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows) {
    nlohmann::ordered_json j = {{"impl", row.impl}, {"what", row.what}};
    j.update(range_json(row.time));
    j.update(nlohmann::ordered_json{{"gflops", row.gflops},
                                    {"peak_percent", measured(r.machine, row.peak_percent)},
                                    {"sgemm_percent", measured(r.machine, row.sgemm_percent)},
                                    {"peak_mb", row.peak_mb},
                                    {"max_abs_diff", row.max_abs_diff},
                                    {"times_s", row.times}});
    doc["results"].push_back(j);
  }
  doc["claims"] = bench_claims(r);
  const auto warning = busy_warning(bench_ranges(r));
  doc["busy_warning"] = warning ? nlohmann::ordered_json(*warning) : nlohmann::ordered_json(nullptr);
  return doc;
}

namespace {

// A STREAM-like copy: two arrays of 256 MiB, each thread copying its share, best of 5 after a warm-up;
// STREAM's count, 2 x the bytes copied (one read, one write) per second.
double measure_copy_gbps(unsigned threads) {
  const std::size_t n = kCopyFloats;  // floats per array; bench_memory_bytes counts the two
  const std::unique_ptr<float[]> a(new float[n]), b(new float[n]);
  const auto on_all = [&](auto body) {
    on_threads(threads, [&](unsigned t) { body(n * t / threads, n * (t + 1) / threads); });
  };
  // First touch on the threads that copy, so that each one's pages are where it runs.
  on_all([&](std::size_t lo, std::size_t hi) {
    std::fill(a.get() + lo, a.get() + hi, 1.0f);
    std::fill(b.get() + lo, b.get() + hi, 0.0f);
  });
  double best = 1e30;
  for (int r = 0; r < 6; ++r) {
    const auto t0 = Clock::now();
    on_all([&](std::size_t lo, std::size_t hi) { std::memcpy(b.get() + lo, a.get() + lo, (hi - lo) * sizeof(float)); });
    if (r > 0) best = std::min(best, seconds_since(t0));
  }
  return 2.0 * static_cast<double>(n * sizeof(float)) / best / 1e9;
}

// Fills x with numbers in [-1, 1) from a cheap hash of (seed, index), on every thread: gigabytes of
// cache would take seconds through the TorchGenerator, and their values matter only for the check.
void fill_hashed(float* x, std::size_t n, std::uint64_t seed, unsigned threads) {
  on_threads(threads, [&](unsigned t) {
    for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) {
      std::uint64_t z = (seed + i) * 0x9E3779B97F4A7C15ull;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z ^= z >> 31;
      x[i] = static_cast<float>(z >> 40) / static_cast<float>(1u << 23) - 1.0f;
    }
  });
}

constexpr double kQuickSweepSeconds = 0.02;  // --quick's sweeps: a fiftieth of a second

// "last-level cache: 32 MiB (one L3)", or that nothing said.
std::string llc_line(const LastLevelCache& llc) {
  if (llc.bytes == 0) return "last-level cache: not known (no sysfs cache description)\n";
  return fmt::format("last-level cache: {:.0f} MiB ({} L{}{}, as sysfs describes the CPUs given)\n",
                     static_cast<double>(llc.bytes) / (1024.0 * 1024.0), llc.instances == 1 ? std::string("one") : std::to_string(llc.instances),
                     llc.level, llc.instances == 1 ? "" : "s");
}

}  // namespace

DecodeReport run_decode_bench(const BenchOptions& o, const std::function<void(const std::string&)>& progress) {
  choose_isa(o);
  DecodeReport report;
  report.options = o;
  report.machine = describe_machine(o, !o.quick);
  const unsigned threads = report.machine.threads;
  if (!o.quick) report.copy_gbps = measure_copy_gbps(threads);
  report.llc = last_level_cache_of_process();
  report.caches = decode_cache_lengths(o, report.llc.bytes);
  report.pool_bytes = decode_pool_bytes(report.llc.bytes, o.max_memory);
  const std::size_t H = o.heads, hd = o.dim / o.heads;
  const std::vector<std::pair<std::string, std::size_t>> impls{{"mha", H}, {"gqa", o.kv_groups}};
  // Every row's layers of cache_k and cache_v, (layers, T, kv, hd) each, come from one pool, allocated and
  // filled once for the largest (filling a fresh gigabyte per row took 0.3 s idle and 2 s on a busy machine);
  // bench_memory_bytes counted it.
  const auto floats_per_layer = [&](std::size_t T, std::size_t kv) { return T * kv * hd; };
  const std::size_t pool = decode_pool_floats(o, report.caches, report.pool_bytes);
  const std::unique_ptr<float[]> k(new float[pool]), v(new float[pool]);
  fill_hashed(k.get(), pool, 1, threads);
  fill_hashed(v.get(), pool, 2, threads);
  for (const std::size_t T : report.caches)
    for (const auto& [impl, kv] : impls) {
      DecodeRow row;
      row.impl = impl;
      row.cache_tokens = T;
      row.kv_heads = kv;
      const std::size_t ld = kv * hd;                    // one cached token's keys (or values), every key/value head
      const std::size_t layer = floats_per_layer(T, kv);  // floats of one layer's keys (or values)
      row.bytes = 2.0 * static_cast<double>(layer * sizeof(float));
      row.fits_llc = report.llc.bytes > 0 && row.bytes <= static_cast<double>(report.llc.bytes);
      row.layers = decode_layers(layer, report.pool_bytes);
      // each layer's new query (H, hd)
      std::vector<float> q(row.layers * H * hd), out(H * hd), ref(H * hd);
      fill_hashed(q.data(), q.size(), 3, 1);
      const DecodeShape shape{T, H, kv, hd};
      const auto io = [&](std::size_t l, float* o_) {
        return DecodeIO{q.data() + l * H * hd, k.get() + l * layer, v.get() + l * layer, ld, o_};
      };
      decode_attention_reference(shape, io(0, ref.data()));
      decode_attention(shape, io(0, out.data()), threads);
      for (std::size_t i = 0; i < out.size(); ++i)
        row.max_abs_diff = std::max(row.max_abs_diff, static_cast<double>(std::fabs(out[i] - ref[i])));
      // A sweep is every layer in turn, the cycle going on from where the last sweep stopped; under
      // --quick it stops after kQuickSweepSeconds (at least one step), still reading each cache after all
      // the others (so from memory): on a busy machine each step, a parallel region, can wait a scheduler's
      // time slice for its second thread, and whole sweeps of 512 layers took seconds each. Returns the
      // time per step.
      std::size_t next = 1 % row.layers;  // the layer the cycle reads next (the check has just read layer 0)
      const auto sweep = [&] {
        const auto t0 = Clock::now();
        std::size_t steps = 0;
        do {
          decode_attention(shape, io(next, out.data()), threads);
          next = (next + 1) % row.layers;
          ++steps;
        } while (steps < row.layers && !(o.quick && seconds_since(t0) >= kQuickSweepSeconds));
        return seconds_since(t0) / static_cast<double>(steps);
      };
      {
        const PinnedFastThreads pinned(threads);  // as the fast rows of the forward run (bench/impls.cpp)
        warm_up(o, sweep);
        for (std::size_t r = 0; r < o.repeats; ++r) row.times.push_back(sweep());
      }
      row.time = time_range(row.times);
      row.gbps = row.bytes / row.time.median_s / 1e9;
      if (report.machine.measured) row.copy_percent = 100.0 * row.gbps / report.copy_gbps;
      report.rows.push_back(row);
      if (progress) progress(impl + " " + std::to_string(T));
    }
  return report;
}

std::vector<NamedRange> decode_ranges(const DecodeReport& r) {
  std::vector<NamedRange> ranges;
  for (const auto& row : r.rows) ranges.push_back({row.impl + " " + std::to_string(row.cache_tokens), row.time});
  return ranges;
}

std::string render_decode_text(const DecodeReport& r) {
  const BenchOptions& o = r.options;
  char buf[512];
  std::string out = "attn bench --decode -- one new token attending to a KV cache, float32\n";
  std::snprintf(buf, sizeof buf, "shape: %zu dims x %zu heads (head_dim %zu); mha reads %zu key/value heads, gqa %zu\n",
                o.dim, o.heads, o.dim / o.heads, o.heads, o.kv_groups);
  out += buf;
  out += render_machine(r.machine);
  if (r.machine.measured) {
    std::snprintf(buf, sizeof buf, "memory: copy %.1f GB/s (STREAM-like, 2 x 256 MiB on every thread; 2 x bytes copied / s)\n",
                  r.copy_gbps);
    out += buf;
  }
  out += llc_line(r.llc);
  if (r.pool_bytes < 4.0 * static_cast<double>(r.llc.bytes))
    out += "(the caches each row cycles through are fewer than four last-level caches: --max-memory allows no more,\n"
           "so a row may find more of its cache there than a real model's would)\n";
  std::snprintf(buf, sizeof buf,
                "each row cycles through %.0f MiB of caches (one per layer, at most 4096 layers) so every step reads its\n"
                "cache from memory; time per step is one layer's, median of %zu sweeps of %s;\n"
                "min..max: the fastest and the slowest sweep's\n\n",
                r.pool_bytes / (1024.0 * 1024.0), o.repeats,
                o.quick ? "at most 20 ms after one such sweep (--quick)" : "every layer after a warm-up");
  out += buf;
  std::vector<TimeRange> times;
  for (const auto& row : r.rows) times.push_back(row.time);
  const std::vector<std::string> ranges = range_cells(times, 1e6, 1, "min..max_us");
  std::snprintf(buf, sizeof buf, "%-5s %7s %7s %10s  %s %10s %8s %8s %12s\n", "impl", "cache", "layers", "us/token",
                ranges[0].c_str(), "MB/token", "GB/s", "%copy", "max|diff|");
  out += buf;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const DecodeRow& row = r.rows[i];
    std::snprintf(buf, sizeof buf, "%-5s %7zu %7zu %10.1f  %s %10.2f %8.1f %s %12.2e\n", row.impl.c_str(),
                  row.cache_tokens, row.layers, row.time.median_s * 1e6, ranges[i + 1].c_str(), row.bytes / 1e6,
                  row.gbps,
                  (row.fits_llc ? std::string("     LLC") : percent_cell(r.machine, row.copy_percent, 8)).c_str(),
                  row.max_abs_diff);
    out += buf;
  }
  out += "\n  us/token: one layer's decode step (the new token's attention over the cache, no projections)\n"
         "  MB/token: the cache's keys and values that step reads, 2 x cache x key/value heads x head_dim x 4 bytes\n";
  if (std::any_of(r.rows.begin(), r.rows.end(), [](const DecodeRow& row) { return row.fits_llc; }))
    out += "  LLC: one layer's cache fits in the last-level cache, so a step may find part of it there although the\n"
           "       layers are read in turn: its GB/s is not a share of the memory's bandwidth, and no %copy is claimed\n";
  return out;
}

nlohmann::ordered_json decode_json(const DecodeReport& r) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = 1;
  doc["lesson"] = "bench-decode";
  doc["config"] = {{"dim", r.options.dim},     {"heads", r.options.heads},     {"kv_groups", r.options.kv_groups},
                   {"cache", r.options.cache}, {"repeats", r.options.repeats}, {"quick", r.options.quick}};
  doc["machine"] = machine_json(r.machine);
  doc["machine"]["copy_gbps"] = measured(r.machine, r.copy_gbps);
  doc["machine"]["llc_bytes"] = r.llc.bytes;
  doc["machine"]["llc_level"] = r.llc.level;
  doc["machine"]["llc_instances"] = r.llc.instances;
  doc["pool_bytes"] = r.pool_bytes;
  doc["caches"] = r.caches;
  doc["results"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows) {
    nlohmann::ordered_json j = {
        {"impl", row.impl}, {"cache_tokens", row.cache_tokens}, {"kv_heads", row.kv_heads}, {"layers", row.layers}};
    j.update(range_json(row.time));
    j.update(nlohmann::ordered_json{{"bytes", row.bytes},
                                    {"gbps", row.gbps},
                                    {"copy_percent", row.fits_llc ? nlohmann::ordered_json(nullptr)
                                                                  : measured(r.machine, row.copy_percent)},
                                    {"fits_llc", row.fits_llc},
                                    {"max_abs_diff", row.max_abs_diff},
                                    {"times_s", row.times}});
    doc["results"].push_back(j);
  }
  const auto warning = busy_warning(decode_ranges(r));
  doc["busy_warning"] = warning ? nlohmann::ordered_json(*warning) : nlohmann::ordered_json(nullptr);
  return doc;
}

}  // namespace attn
