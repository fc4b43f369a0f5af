#pragma once
// How many CPUs attn may use, and what set the number: one count for every parallel part (the fused
// kernel's OpenMP threads, oneDNN, OpenBLAS, attn-bench's pinned copies, attn serve's jobs), where each
// used std::thread::hardware_concurrency(), which counts the machine's CPUs whatever the process is given.
// The count is the CPUs of the process's affinity mask (taskset, a container's cpuset), capped by the
// cgroup's CPU quota (cgroup v2's cpu.max or v1's cpu.cfs_quota_us: quota / period, rounded up), by
// OMP_NUM_THREADS and OPENBLAS_NUM_THREADS when they are set (OpenBLAS is told the count, so a user's word to
// it must not be raised), and by --threads when it is given; the lowest wins, and says where it came from. Also here: the last-level cache those CPUs share, which attn bench --decode sizes its caches by.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attn {

struct CpuCount {
  unsigned threads = 1;
  std::string source;  // what set it: "affinity mask", "cgroup quota", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "--threads"
};

// What limits the count, read from the process (cpu_limits_of_process) or given by a test.
struct CpuLimits {
  unsigned affinity = 1;                 // CPUs in the affinity mask
  std::optional<double> quota;           // CPUs the cgroup's quota allows (1.5: 150000 of 100000 µs)
  std::optional<unsigned> omp;           // OMP_NUM_THREADS (its first level)
  std::optional<unsigned> flag;          // --threads N
  std::optional<unsigned> blas;          // OPENBLAS_NUM_THREADS (or GOTO_NUM_THREADS): the user's word on OpenBLAS
};

// The lowest of the limits, at least 1; on a tie the earlier source names it, in the order affinity mask,
// cgroup quota, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, --threads.
CpuCount cpu_count(const CpuLimits& limits);

// cgroup v2's cpu.max ("max 100000", "200000 100000"): the CPUs its quota allows, or none for "max", a
// missing or unreadable file, or text that is not two numbers.
std::optional<double> cpu_max_quota(const std::string& path);
// cgroup v1's cpu controller: cpu.cfs_quota_us / cpu.cfs_period_us in `dir`; none for a quota of -1 (no
// limit), missing or unreadable files, or text that is not a number.
std::optional<double> cfs_quota(const std::string& dir);
// The tightest quota of the cgroup the process is in and of every cgroup above it, in either hierarchy:
// /proc/self/cgroup's "0::/PATH" (v2: cpu.max under `root`) and its "N:cpu,...:/PATH" (v1: the cpu
// controller's files under `root`/cpu or `root`/cpu,cpuacct), then their parents'. A container's own cgroup
// is mounted as the root of its view, so a path the view lacks finds the root's files.
std::optional<double> cgroup_quota(const std::string& root = "/sys/fs/cgroup", const std::string& self = "/proc/self/cgroup");
// OMP_NUM_THREADS's value as OpenMP reads it ("4", or "4,2": the first level), none when unset, empty or
// not a positive number.
std::optional<unsigned> omp_num_threads(const char* value);
// The CPUs in the process's affinity mask (sched_getaffinity), at least 1.
unsigned affinity_cpus();

// The process's limits (with --threads, `flag`).
CpuLimits cpu_limits_of_process(std::optional<std::size_t> flag = std::nullopt);
// The count for the process: cpu_count(cpu_limits_of_process(flag)).
CpuCount cpus_of_process(std::optional<std::size_t> flag = std::nullopt);

// The last-level cache the process's CPUs can fill: every instance of the highest cache level (data or
// unified) that a CPU of the mask has, each counted once (an AMD CCX, a socket), as the kernel's sysfs
// describes them. glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) was no help: on the 2-core development VM it
// said 320 MiB of a 32 MiB L3.
struct LastLevelCache {
  std::size_t bytes = 0;      // all instances together; 0 when nothing says
  int level = 0;              // 3 for an L3
  std::size_t instances = 0;  // how many the mask's CPUs reach
};
// From `sys` (/sys/devices/system/cpu) for the CPUs `cpus`.
LastLevelCache last_level_cache(const std::string& sys, const std::vector<int>& cpus);
// For the process: the CPUs of its affinity mask when first asked.
LastLevelCache last_level_cache_of_process();
// The CPUs of the process's affinity mask, in order.
std::vector<int> affinity_cpu_list();

}  // namespace attn
