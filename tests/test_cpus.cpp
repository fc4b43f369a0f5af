// The CPU count every parallel part of attn uses (io/cpus.hpp): the affinity mask, the cgroup's quota,
// OMP_NUM_THREADS and --threads, the lowest winning and named; cgroup v2's cpu.max and v1's cfs quota read
// from fake files; the last-level cache from a fake sysfs.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/bench_options.hpp"
#include "core/terminal_text.hpp"
#include "io/cpus.hpp"
#include "kernels/blas.hpp"
#include "support.hpp"

using attn::CpuCount;
using attn::CpuLimits;

TEST_CASE("cpus: the lowest of the affinity mask, the cgroup quota, OMP_NUM_THREADS and --threads, and what set it",
          "[cpus]") {
  const auto count = [](CpuLimits l) { return attn::cpu_count(l); };
  CHECK(count({16, std::nullopt, std::nullopt, std::nullopt}).threads == 16);
  CHECK(count({16, std::nullopt, std::nullopt, std::nullopt}).source == "affinity mask");
  const CpuCount quota = count({16, 2.5, std::nullopt, std::nullopt});  // 250000 of 100000 µs: three CPUs, rounded up
  CHECK(quota.threads == 3);
  CHECK(quota.source == "cgroup quota");
  CHECK(count({16, 0.2, std::nullopt, std::nullopt}).threads == 1);  // a fifth of a CPU: one thread
  CHECK(count({16, 2.0, std::nullopt, std::nullopt}).threads == 2);
  const CpuCount omp = count({16, 8.0, 2u, std::nullopt});
  CHECK(omp.threads == 2);
  CHECK(omp.source == "OMP_NUM_THREADS");
  const CpuCount flag = count({16, 8.0, 4u, 1u});
  CHECK(flag.threads == 1);
  CHECK(flag.source == "--threads");
  // A limit above what the mask allows does not raise it; on a tie the first named keeps it.
  CHECK(count({2, 4.0, 8u, 16u}).threads == 2);
  CHECK(count({2, 4.0, 8u, 16u}).source == "affinity mask");
  CHECK(count({4, 2.0, 2u, std::nullopt}).source == "cgroup quota");
  CHECK(count({0, std::nullopt, std::nullopt, std::nullopt}).threads == 1);  // never none
  // OpenBLAS's own variable: the user's word to it, which attn does not raise.
  const CpuCount blas = count({16, std::nullopt, 8u, std::nullopt, 2u});
  CHECK(blas.threads == 2);
  CHECK(blas.source == "OPENBLAS_NUM_THREADS");
  CHECK(count({16, std::nullopt, 2u, std::nullopt, 2u}).source == "OMP_NUM_THREADS");
  // A quota past every CPU (1e10 of them: the kernel allows it) is no limit.
  CHECK(count({16, 1e10, std::nullopt, std::nullopt}).threads == 16);
  CHECK(count({16, 1e10, std::nullopt, std::nullopt}).source == "affinity mask");
}

TEST_CASE("cpus: cgroup v2's cpu.max, the tightest quota up the process's cgroup", "[cpus]") {
  attn_test::Scratch s;
  CHECK(attn::cpu_max_quota(s.file("unlimited", "max 100000\n")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.file("two", "200000 100000\n")) == 2.0);
  CHECK(attn::cpu_max_quota(s.file("half", "50000 100000\n")) == 0.5);
  CHECK(attn::cpu_max_quota(s.file("empty", "")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.file("words", "lots 100000\n")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.file("zero", "100000 0\n")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.file("inf", "inf 100000\n")) == std::nullopt);  // whole numbers only
  CHECK(attn::cpu_max_quota(s.file("hex", "0x1p20 100000\n")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.dir + "/missing") == std::nullopt);
  // A fake /sys/fs/cgroup: the process in /app/worker, limited to 3 CPUs there and to 1.5 in /app.
  const std::string root = s.dir + "/cgroup";
  for (const std::string d : {root, root + "/app", root + "/app/worker"}) REQUIRE(::mkdir(d.c_str(), 0700) == 0);
  s.file("cgroup/cpu.max", "max 100000\n");
  s.file("cgroup/app/cpu.max", "150000 100000\n");
  s.file("cgroup/app/worker/cpu.max", "300000 100000\n");
  CHECK(attn::cgroup_quota(root, s.file("self", "0::/app/worker\n")) == 1.5);
  CHECK(attn::cgroup_quota(root, s.file("self-top", "0::/\n")) == std::nullopt);
  CHECK(attn::cgroup_quota(root, s.file("self-v1", "4:cpu,cpuacct:/app\n")) == std::nullopt);  // no v1 files here
  CHECK(attn::cgroup_quota(root, s.dir + "/no-such-file") == std::nullopt);
  CHECK(attn::cpu_count({16, attn::cgroup_quota(root, s.dir + "/self"), std::nullopt, std::nullopt}).threads == 2);
}

TEST_CASE("cpus: cgroup v1's cpu.cfs_quota_us, as Docker on a v1 host sets it", "[cpus]") {
  attn_test::Scratch s;
  const std::string root = s.dir + "/cgroup";
  for (const std::string d : {root, root + "/cpu,cpuacct", root + "/cpu,cpuacct/docker", root + "/cpu,cpuacct/docker/box"})
    REQUIRE(::mkdir(d.c_str(), 0700) == 0);
  s.file("cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");  // the host's: no limit
  s.file("cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  s.file("cgroup/cpu,cpuacct/docker/box/cpu.cfs_quota_us", "250000\n");  // docker run --cpus 2.5
  s.file("cgroup/cpu,cpuacct/docker/box/cpu.cfs_period_us", "100000\n");
  CHECK(attn::cfs_quota(root + "/cpu,cpuacct") == std::nullopt);
  CHECK(attn::cfs_quota(root + "/cpu,cpuacct/docker/box") == 2.5);
  CHECK(attn::cfs_quota(root + "/missing") == std::nullopt);
  const std::string self = s.file("self", "12:memory:/docker/box\n4:cpu,cpuacct:/docker/box\n0::/\n");
  CHECK(attn::cgroup_quota(root, self) == 2.5);
  CHECK(attn::cpu_count({16, attn::cgroup_quota(root, self), std::nullopt, std::nullopt}).threads == 3);
  // Inside the container its own cgroup is the root of the view: the path the host names is not there.
  s.file("cgroup/cpu,cpuacct/cpu.cfs_quota_us", "150000\n");
  CHECK(attn::cgroup_quota(root, s.file("self-inside", "4:cpu,cpuacct:/docker/other\n")) == 1.5);
  // Both hierarchies (a hybrid host): the tighter wins.
  s.file("cgroup/cpu.max", "100000 100000\n");
  CHECK(attn::cgroup_quota(root, s.file("self-both", "4:cpu,cpuacct:/docker/box\n0::/\n")) == 1.0);
}

TEST_CASE("cpus: the last-level cache the process's CPUs share, each instance once, from sysfs", "[cpus]") {
  attn_test::Scratch s;
  // Four CPUs on two L3s of 32 MiB (two AMD CCXs); L1d, L1i and L2 of their own.
  const std::string sys = s.dir + "/cpu";
  REQUIRE(::mkdir(sys.c_str(), 0700) == 0);
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string c = "cpu/cpu" + std::to_string(cpu);
    REQUIRE(::mkdir((s.dir + "/" + c).c_str(), 0700) == 0);
    REQUIRE(::mkdir((s.dir + "/" + c + "/cache").c_str(), 0700) == 0);
    const std::vector<std::vector<std::string>> caches{{"1", "Data", "32K", std::to_string(cpu)},
                                                       {"1", "Instruction", "32K", std::to_string(cpu)},
                                                       {"2", "Unified", "1024K", std::to_string(cpu)},
                                                       {"3", "Unified", "32768K", cpu < 2 ? "0-1" : "2-3"}};
    for (std::size_t i = 0; i < caches.size(); ++i) {
      const std::string dir = c + "/cache/index" + std::to_string(i);
      REQUIRE(::mkdir((s.dir + "/" + dir).c_str(), 0700) == 0);
      s.file(dir + "/level", caches[i][0] + "\n");
      s.file(dir + "/type", caches[i][1] + "\n");
      s.file(dir + "/size", caches[i][2] + "\n");
      s.file(dir + "/shared_cpu_list", caches[i][3] + "\n");
    }
  }
  const attn::LastLevelCache all = attn::last_level_cache(sys, {0, 1, 2, 3});
  CHECK(all.level == 3);
  CHECK(all.instances == 2);
  CHECK(all.bytes == std::size_t{64} << 20);
  const attn::LastLevelCache one_ccx = attn::last_level_cache(sys, {0, 1});  // taskset -c 0,1
  CHECK(one_ccx.instances == 1);
  CHECK(one_ccx.bytes == std::size_t{32} << 20);
  CHECK(attn::last_level_cache(sys, {3}).bytes == std::size_t{32} << 20);
  CHECK(attn::last_level_cache(s.dir + "/nothing", {0}).bytes == 0);  // nothing says: 0, never a guess
  // This machine's, as the process reads it: some level, some size, or nothing at all.
  const attn::LastLevelCache mine = attn::last_level_cache_of_process();
  CHECK((mine.bytes == 0) == (mine.instances == 0));
}

TEST_CASE("cpus: OMP_NUM_THREADS as OpenMP reads it, and the process's own mask", "[cpus]") {
  CHECK(attn::omp_num_threads("4") == 4u);
  CHECK(attn::omp_num_threads("4,2") == 4u);  // nested levels: the first
  CHECK(attn::omp_num_threads(nullptr) == std::nullopt);
  CHECK(attn::omp_num_threads("") == std::nullopt);
  CHECK(attn::omp_num_threads("0") == std::nullopt);
  CHECK(attn::omp_num_threads("-3") == std::nullopt);
  CHECK(attn::omp_num_threads("3x") == std::nullopt);
  CHECK(attn::omp_num_threads("many") == std::nullopt);
  const unsigned mask = attn::affinity_cpus();
  CHECK(mask >= 1);
  CHECK(mask <= std::max(1u, std::thread::hardware_concurrency()));
}

TEST_CASE("cpus: attn bench runs on the CPUs it is given: OMP_NUM_THREADS=1, taskset -c 0 and --threads 1 each give threads 1",
          "[cpus][bench]") {
  const std::string args = " bench --quick --json --batch 1 --tokens 16 --dim 8 --heads 2 --kv-groups 1 --repeats 1 --impl fused";
  const auto machine = [&](const std::string& prefix) {
    const attn_test::Run r = attn_test::shell("env -u OMP_NUM_THREADS " + prefix + attn_test::quote(ATTN_EXE) + args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out)["machine"];
  };
  // What names the count where several limits say 1 (a one-CPU runner, a quota of one CPU) is the rule's
  // to say: the limits as this process reads them, with OMP_NUM_THREADS as each run sets it.
  const auto expected = [](std::optional<unsigned> omp, std::optional<std::size_t> flag) {
    attn::CpuLimits l = attn::cpu_limits_of_process(flag);
    l.omp = omp;
    return attn::cpu_count(l);
  };
  const nlohmann::json omp = machine("OMP_NUM_THREADS=1 ");
  CHECK(omp["threads"] == 1);
  CHECK(omp["threads_from"] == expected(1u, std::nullopt).source);
  // One CPU of the mask: its first, which the mask may not number 0.
  const std::vector<int> mask = attn::affinity_cpu_list();
  REQUIRE(!mask.empty());
  const nlohmann::json pinned = machine("taskset -c " + std::to_string(mask.front()) + " ");
  CHECK(pinned["threads"] == 1);
  CHECK(pinned["threads_from"] == "affinity mask");
  const nlohmann::json one = [&] {
    const attn_test::Run r = attn_test::shell("env -u OMP_NUM_THREADS " + attn_test::quote(ATTN_EXE) + args + " --threads 1");
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out)["machine"];
  }();
  CHECK(one["threads"] == 1);
  CHECK(one["threads_from"] == expected(std::nullopt, 1).source);
  if (attn::cpus_of_process().threads > 1) CHECK(one["threads_from"] == "--threads");
  const nlohmann::json all = machine("");  // what this process is given, as attn-bench reads it
  const CpuCount given = expected(std::nullopt, std::nullopt);
  CHECK(all["threads"] == given.threads);
  CHECK(all["threads_from"] == given.source);
}

TEST_CASE("cpus: OpenBLAS's kernels outside the golden families, and the core it should be told to run", "[cpus]") {
  CHECK(attn::core_in_golden_families("SkylakeX"));
  CHECK(attn::core_in_golden_families("Cooperlake"));
  CHECK(attn::core_in_golden_families("Haswell"));
  CHECK(attn::core_in_golden_families("Zen"));
  CHECK_FALSE(attn::core_in_golden_families("Prescott"));
  CHECK_FALSE(attn::core_in_golden_families(""));
  // Debian's 0.3.21 on a Xeon it did not know: Prescott, on a CPU with AVX-512.
  CHECK(attn::better_openblas_core("Prescott", true, true) == "SkylakeX");
  CHECK(attn::better_openblas_core("Prescott", false, true) == "Haswell");
  CHECK(attn::better_openblas_core("Sandybridge", false, true) == "Haswell");
  CHECK(attn::better_openblas_core("Prescott", false, false) == std::nullopt);  // nothing better runs there
  CHECK(attn::better_openblas_core("Haswell", true, true) == std::nullopt);     // AVX2's kernels on an AVX-512 CPU: held too
  CHECK(attn::better_openblas_core("Cooperlake", true, true) == std::nullopt);
}

namespace {

// The core better_openblas_core gives on this CPU for a fallback, as the program decides it.
std::string better_here() {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return attn::better_openblas_core("Prescott", avx512, avx2).value_or("");
}

}  // namespace

TEST_CASE("cpus: attn bench says when OpenBLAS runs Prescott's kernels, and what a restart chose", "[cpus][bench]") {
  const std::string better = better_here();
  if (better.empty()) attn_test::skip_case("this CPU runs neither AVX2 with FMA nor AVX-512: Prescott's kernels are its best", true);
  const std::string args = " bench --quick --json --batch 1 --tokens 16 --dim 8 --heads 2 --kv-groups 1 --repeats 1 --impl fused";
  const auto machine = [&](const std::string& env) {
    const attn_test::Run r =
        attn_test::shell("env -u ATTN_OPENBLAS_FELL_BACK -u OPENBLAS_CORETYPE " + env + " " + attn_test::quote(ATTN_EXE) + args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out)["machine"];
  };
  // The user asked for Prescott's kernels: attn runs them (no restart over the user's choice) and says so.
  const nlohmann::json asked = machine("OPENBLAS_CORETYPE=Prescott");
  CHECK(asked["openblas_core"] == "Prescott");
  REQUIRE(asked["openblas_warning"].is_string());
  CHECK(asked["openblas_warning"].get<std::string>() ==
        "OpenBLAS runs its Prescott kernels (OPENBLAS_CORETYPE is set) on a CPU that runs " + better +
            "'s: the lessons' products run several times slower, and their numbers may differ from the book's in "
            "the last digits; OPENBLAS_CORETYPE=" + better + " runs the right ones");
  // After a restart (the environment it leaves): the core it chose, and what it replaced.
  const nlohmann::json restarted = machine("ATTN_OPENBLAS_FELL_BACK=Prescott OPENBLAS_CORETYPE=" + better);
  CHECK(restarted["openblas_core"] == better);
  CHECK(restarted["openblas_warning"] ==
        "OpenBLAS chose its Prescott kernels on this CPU, which it did not know; attn runs it with "
        "OPENBLAS_CORETYPE=" + better + " instead (the same numbers as the book's, several times faster)");
  // The variable is anyone's to set: its text comes back escaped, never a terminal's control sequence.
  const nlohmann::json hostile = machine("ATTN_OPENBLAS_FELL_BACK=\"$(printf '\\033[31mred')\" OPENBLAS_CORETYPE=" + better);
  REQUIRE(hostile["openblas_warning"].is_string());
  const std::string said = hostile["openblas_warning"].get<std::string>();
  CHECK(said.find('\x1b') == std::string::npos);
  CHECK(said.rfind("OpenBLAS chose its " + attn::visible("\x1b[31mred") + " kernels on this CPU", 0) == 0);
  // Kernels of the families, as the user chose them (on a CPU OpenBLAS knows, its own choice is one too; on
  // one it does not, attn would restart and say so): nothing to say.
  CHECK(machine("OPENBLAS_CORETYPE=" + better)["openblas_warning"].is_null());
}

TEST_CASE("cpus: a --model run says once on stderr when OpenBLAS runs Prescott's kernels", "[cpus][e2e]") {
  if (better_here().empty()) attn_test::skip_case("this CPU runs neither AVX2 with FMA nor AVX-512: Prescott's kernels are its best", true);
  const std::string run = attn_test::quote(ATTN_EXE) + " heads --model " + attn_test::quote(ATTN_TESTS_DIR "/golden/models/tiny-f32") + " --json";
  const attn_test::Run slow = attn_test::shell("env -u ATTN_OPENBLAS_FELL_BACK OPENBLAS_CORETYPE=Prescott " + run);
  REQUIRE(slow.status == 0);
  CHECK(slow.err.rfind("attn: OpenBLAS runs its Prescott kernels", 0) == 0);
  CHECK(std::count(slow.err.begin(), slow.err.end(), '\n') == 1);
  const attn_test::Run mine = attn_test::shell("env -u ATTN_OPENBLAS_FELL_BACK OPENBLAS_CORETYPE=" + better_here() + " " + run);
  REQUIRE(mine.status == 0);
  CHECK(mine.err.empty());
  // A lesson without a model is short: nothing said.
  const attn_test::Run plain = attn_test::shell("env -u ATTN_OPENBLAS_FELL_BACK OPENBLAS_CORETYPE=Prescott " +
                                                attn_test::quote(ATTN_EXE) + " mha --json");
  REQUIRE(plain.status == 0);
  CHECK(plain.err.empty());
}

TEST_CASE("cpus: --threads changes no number: a lesson, a --model run and the tour, byte for byte", "[cpus][e2e]") {
  const std::string tiny = attn_test::quote(ATTN_TESTS_DIR "/golden/models/tiny-f32");
  for (const std::string& args : std::vector<std::string>{" mha --json --batch 3", " heads --model " + tiny + " --json",
                                 " mha --model " + tiny + " --layer 1 --json", " tour --quiet"}) {
    INFO(args);
    const attn_test::Run all = attn_test::shell("env -u OMP_NUM_THREADS " + attn_test::quote(ATTN_EXE) + args);
    REQUIRE(all.status == 0);
    REQUIRE(!all.out.empty());
    for (const char* threads : {"1", "3", "16"}) {
      const attn_test::Run some = attn_test::shell("env -u OMP_NUM_THREADS " + attn_test::quote(ATTN_EXE) + args + " --threads " + threads);
      INFO("--threads " << threads << ": " << some.err);
      CHECK(some.status == 0);
      CHECK(some.out == all.out);
    }
  }
  const attn_test::Run zero = attn_test::shell(attn_test::quote(ATTN_EXE) + " mha --threads 0");
  CHECK(zero.status == 2);
  CHECK(zero.err.find("--threads") != std::string::npos);
}

TEST_CASE("cpus: attn bench --decode also times a cache past the last-level cache, when no default length is",
          "[cpus]") {
  attn::BenchOptions o;
  o.decode = true;
  const std::size_t MiB = std::size_t{1} << 20;
  // gqa's layer (4 of 12 heads of 64): 2 KiB a token. The defaults' 32k tokens, 64 MiB, pass a 32 MiB LLC.
  CHECK(attn::decode_cache_lengths(o, 32 * MiB) == o.cache);
  // A 300 MiB LLC (the 16-core Xeon's): 256k tokens, 512 MiB, are the first power of two past it.
  const std::vector<std::size_t> xeon = attn::decode_cache_lengths(o, 300 * MiB);
  CHECK(xeon == std::vector<std::size_t>{1024, 8192, 32768, 262144});
  CHECK(attn::decode_cache_lengths(o, 0) == o.cache);  // the LLC not known: nothing added
  attn::BenchOptions quick = o;
  quick.quick = true;
  CHECK(attn::decode_cache_lengths(quick, 300 * MiB) == o.cache);  // --quick: a quick look only
  attn::BenchOptions chosen = o;
  chosen.cache = {4096};
  CHECK(attn::decode_cache_lengths(chosen, 300 * MiB) == chosen.cache);  // --cache's own, as given
  attn::BenchOptions tight = o;
  tight.max_memory = std::size_t{1} << 30;  // the row would not fit the budget: left out, not refused
  CHECK(attn::decode_cache_lengths(tight, 300 * MiB) == o.cache);
  // The pool each row cycles through: at least 1 GiB, and four LLCs where that is more.
  const std::size_t budget = attn::kDefaultMemoryBudget;
  CHECK(attn::decode_pool_bytes(32 * MiB, budget) == double(1u << 30));
  CHECK(attn::decode_pool_bytes(300 * MiB, budget) == 4.0 * double(300 * MiB));
  // Two sockets of Milan-X (2 x 768 MiB): four LLCs would pass the default budget; half of it, then.
  const double milan = attn::decode_pool_bytes(1536 * MiB, budget);
  CHECK(milan < 4.0 * double(1536 * MiB));
  CHECK(milan == (double(budget) - double(attn::kBaseBytes)) / 2);
  // So the default run fits the default budget there, as with 32 MiB and 300 MiB.
  for (const std::size_t llc : {32 * MiB, 300 * MiB, 1536 * MiB}) {
    INFO("LLC " << llc / MiB << " MiB");
    CHECK(attn::bench_memory_bytes(o, llc) <= budget);
  }
}

TEST_CASE("cpus: where OpenBLAS fell back to Prescott's kernels, attn restarts itself on the family's and says so",
          "[cpus][e2e]") {
  const std::string better = better_here();
  if (better.empty()) attn_test::skip_case("this CPU runs neither AVX2 with FMA nor AVX-512: Prescott's kernels are its best", true);
  // OpenBLAS answering "Prescott" until OPENBLAS_CORETYPE is set (tests/fake_openblas_core.cpp).
  const std::string fallback = "env -u OPENBLAS_CORETYPE -u ATTN_OPENBLAS_FELL_BACK LD_PRELOAD=" +
                               attn_test::quote(ATTN_FAKE_OPENBLAS_CORE) + " ";
  const std::string restarted = "OpenBLAS chose its Prescott kernels on this CPU, which it did not know; attn runs it with "
                                "OPENBLAS_CORETYPE=" + better + " instead (the same numbers as the book's, several times faster)";
  const attn_test::Run bench = attn_test::shell(fallback + attn_test::quote(ATTN_EXE) +
                                                " bench --quick --json --batch 1 --tokens 16 --dim 8 --heads 2 --kv-groups 1 "
                                                "--repeats 1 --impl fused");
  INFO(bench.err);
  REQUIRE(bench.status == 0);
  const nlohmann::json machine = nlohmann::json::parse(bench.out)["machine"];
  CHECK(machine["openblas_core"] == better);  // the kernels the restarted attn-bench runs
  CHECK(machine["openblas_warning"] == restarted);
  // A lesson on a model: the restarted attn says it once, and prints what the family's kernels print.
  const std::string lesson = attn_test::quote(ATTN_EXE) + " heads --model " +
                             attn_test::quote(ATTN_TESTS_DIR "/golden/models/tiny-f32") + " --json";
  const attn_test::Run fell = attn_test::shell(fallback + lesson);
  REQUIRE(fell.status == 0);
  CHECK(fell.err == "attn: " + restarted + "\n");
  const attn_test::Run chosen = attn_test::shell("env -u ATTN_OPENBLAS_FELL_BACK OPENBLAS_CORETYPE=" + better + " " + lesson);
  REQUIRE(chosen.status == 0);
  CHECK(fell.out == chosen.out);
  // Without the restart (the user's own OPENBLAS_CORETYPE is respected; here the fake one says Prescott
  // whatever it is told only while the variable is unset, so the guard is the other variable): the slow
  // kernels, and the advice.
  const attn_test::Run guarded = attn_test::shell(fallback + "ATTN_OPENBLAS_FELL_BACK= " + lesson);
  REQUIRE(guarded.status == 0);
  CHECK(guarded.err.rfind("attn: OpenBLAS runs its Prescott kernels on a CPU that runs " + better + "'s", 0) == 0);
}
