#pragma once
// How many CPUs attn may use, and what set the number: one count for every parallel part (the fused
// kernel's OpenMP threads, oneDNN, OpenBLAS, attn-bench's pinned copies, attn serve's jobs), where each
// used std::thread::hardware_concurrency(), which counts the machine's CPUs whatever the process is given.
// The count is the CPUs of the process's affinity mask (taskset, a container's cpuset), capped by the
// cgroup's CPU quota (cgroup v2 cpu.max: quota / period, rounded up), by OMP_NUM_THREADS when it is set, and
// by --threads when it is given; the lowest wins, and says where it came from.
#include <optional>
#include <string>

namespace attn {

struct CpuCount {
  unsigned threads = 1;
  std::string source;  // what set it: "affinity mask", "cgroup cpu.max", "OMP_NUM_THREADS", "--threads"
};

// What limits the count, read from the process (cpu_limits_of_process) or given by a test.
struct CpuLimits {
  unsigned affinity = 1;                 // CPUs in the affinity mask
  std::optional<double> quota;           // CPUs the cgroup's quota allows (1.5: 150000 of 100000 µs)
  std::optional<unsigned> omp;           // OMP_NUM_THREADS (its first level)
  std::optional<unsigned> flag;          // --threads N
};

// The lowest of the limits, at least 1; on a tie the earlier source in the list above names it.
CpuCount cpu_count(const CpuLimits& limits);

// cgroup v2's cpu.max ("max 100000", "200000 100000"): the CPUs its quota allows, or none for "max", a
// missing or unreadable file, or text that is not two numbers.
std::optional<double> cpu_max_quota(const std::string& path);
// The tightest quota of the cgroup the process is in and of every cgroup above it: /proc/self/cgroup's
// "0::/PATH", its cpu.max under `root`, then its parents'.
std::optional<double> cgroup_quota(const std::string& root = "/sys/fs/cgroup", const std::string& self = "/proc/self/cgroup");
// OMP_NUM_THREADS's value as OpenMP reads it ("4", or "4,2": the first level), none when unset, empty or
// not a positive number.
std::optional<unsigned> omp_num_threads(const char* value);
// The CPUs in the process's affinity mask (sched_getaffinity), at least 1.
unsigned affinity_cpus();

// The process's limits (with --threads, `flag`).
CpuLimits cpu_limits_of_process(std::optional<unsigned> flag = std::nullopt);

}  // namespace attn
