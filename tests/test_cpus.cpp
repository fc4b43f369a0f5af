// The CPU count every parallel part of attn uses (io/cpus.hpp): the affinity mask, the cgroup's quota,
// OMP_NUM_THREADS and --threads, the lowest winning and named; cgroup v2's cpu.max read from fake files.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "io/cpus.hpp"
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
  CHECK(quota.source == "cgroup cpu.max");
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
  CHECK(count({4, 2.0, 2u, std::nullopt}).source == "cgroup cpu.max");
  CHECK(count({0, std::nullopt, std::nullopt, std::nullopt}).threads == 1);  // never none
}

TEST_CASE("cpus: cgroup v2's cpu.max, the tightest quota up the process's cgroup", "[cpus]") {
  attn_test::Scratch s;
  CHECK(attn::cpu_max_quota(s.file("unlimited", "max 100000\n")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.file("two", "200000 100000\n")) == 2.0);
  CHECK(attn::cpu_max_quota(s.file("half", "50000 100000\n")) == 0.5);
  CHECK(attn::cpu_max_quota(s.file("empty", "")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.file("words", "lots 100000\n")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.file("zero", "100000 0\n")) == std::nullopt);
  CHECK(attn::cpu_max_quota(s.dir + "/missing") == std::nullopt);
  // A fake /sys/fs/cgroup: the process in /app/worker, limited to 3 CPUs there and to 1.5 in /app.
  const std::string root = s.dir + "/cgroup";
  for (const std::string d : {root, root + "/app", root + "/app/worker"}) REQUIRE(::mkdir(d.c_str(), 0700) == 0);
  s.file("cgroup/cpu.max", "max 100000\n");
  s.file("cgroup/app/cpu.max", "150000 100000\n");
  s.file("cgroup/app/worker/cpu.max", "300000 100000\n");
  CHECK(attn::cgroup_quota(root, s.file("self", "0::/app/worker\n")) == 1.5);
  CHECK(attn::cgroup_quota(root, s.file("self-top", "0::/\n")) == std::nullopt);
  CHECK(attn::cgroup_quota(root, s.file("self-v1", "4:cpu,cpuacct:/app\n")) == std::nullopt);  // cgroup v1 alone: not read
  CHECK(attn::cgroup_quota(root, s.dir + "/no-such-file") == std::nullopt);
  CHECK(attn::cpu_count({16, attn::cgroup_quota(root, s.dir + "/self"), std::nullopt, std::nullopt}).threads == 2);
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

TEST_CASE("cpus: attn bench runs on the CPUs it is given: OMP_NUM_THREADS=1 and taskset -c 0 each give threads 1",
          "[cpus][bench]") {
  const std::string args = " bench --quick --json --batch 1 --tokens 16 --dim 8 --heads 2 --kv-groups 1 --repeats 1 --impl fused";
  const auto machine = [&](const std::string& prefix) {
    const attn_test::Run r = attn_test::shell("env -u OMP_NUM_THREADS " + prefix + attn_test::quote(ATTN_EXE) + args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out)["machine"];
  };
  const nlohmann::json omp = machine("OMP_NUM_THREADS=1 ");
  CHECK(omp["threads"] == 1);
  CHECK(omp["threads_from"] == "OMP_NUM_THREADS");
  const nlohmann::json pinned = machine("taskset -c 0 ");
  CHECK(pinned["threads"] == 1);
  CHECK(pinned["threads_from"] == "affinity mask");
  const nlohmann::json all = machine("");  // what this process is given, as attn-bench reads it
  const CpuCount given = attn::cpu_count({attn::affinity_cpus(), attn::cgroup_quota(), std::nullopt, std::nullopt});
  CHECK(all["threads"] == given.threads);
  CHECK(all["threads_from"] == given.source);
}
