#include "io/cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <utility>
#include <sstream>

namespace attn {

CpuCount cpu_count(const CpuLimits& l) {
  CpuCount out{std::max(1u, l.affinity), "affinity mask"};
  const auto cap = [&](std::optional<unsigned> n, const char* source) {
    if (n && *n < out.threads) out = {std::max(1u, *n), source};
  };
  // Clamped before the cast: a quota of 1e10 CPUs (the kernel allows it) is no limit, and not undefined.
  if (l.quota) cap(static_cast<unsigned>(std::clamp(std::ceil(*l.quota - 1e-9), 1.0, double(out.threads))), "cgroup quota");
  cap(l.omp, "OMP_NUM_THREADS");
  cap(l.blas, "OPENBLAS_NUM_THREADS");
  cap(l.flag, "--threads");
  return out;
}

std::optional<double> cpu_max_quota(const std::string& path) {
  std::ifstream in(path);
  std::string quota, period;
  if (!(in >> quota >> period) || quota == "max") return std::nullopt;
  // Whole numbers of microseconds, as the kernel writes them (strtod would also take "inf" or "0x1p9").
  const auto whole = [](const std::string& text) -> std::optional<double> {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18) return std::nullopt;
    return static_cast<double>(std::strtoull(text.c_str(), nullptr, 10));
  };
  const std::optional<double> q = whole(quota), p = whole(period);
  if (!q || !p || !(*q > 0) || !(*p > 0)) return std::nullopt;
  return *q / *p;
}

std::optional<double> cfs_quota(const std::string& dir) {
  std::ifstream quota_file(dir + "/cpu.cfs_quota_us"), period_file(dir + "/cpu.cfs_period_us");
  long long quota = 0, period = 0;
  if (!(quota_file >> quota) || !(period_file >> period) || quota <= 0 || period <= 0) return std::nullopt;
  return static_cast<double>(quota) / static_cast<double>(period);
}

namespace {

// `tightest` becomes `q` where `q` is a tighter quota.
void keep_tightest(std::optional<double>& tightest, std::optional<double> q) {
  if (q && (!tightest || *q < *tightest)) tightest = q;
}

// The parent of a cgroup path ("/a/b" -> "/a", "/a" -> "/").
std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// The tightest of quota(dir) for `path` and every cgroup above it, under `mount`.
template <class Quota>
std::optional<double> tightest_up(const std::string& mount, std::string path, Quota quota) {
  std::optional<double> tightest;
  while (true) {
    keep_tightest(tightest, quota(mount + (path == "/" ? "" : path)));
    if (path == "/") return tightest;
    path = parent_of(path);
  }
}

}  // namespace

std::optional<double> cgroup_quota(const std::string& root, const std::string& self) {
  std::ifstream in(self);
  std::optional<double> tightest;
  for (std::string line; std::getline(in, line);) {
    // "ID:CONTROLLERS:PATH"; cgroup v2's one hierarchy has ID 0 and no controllers.
    const std::size_t first = line.find(':'), second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first), controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (path.empty() || path.front() != '/') continue;
    if (id == "0" && controllers.empty()) {
      keep_tightest(tightest, tightest_up(root, path, [](const std::string& dir) { return cpu_max_quota(dir + "/cpu.max"); }));
      continue;
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');)
      if (name == "cpu")
        for (const char* mount : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"})
          keep_tightest(tightest, tightest_up(root + mount, path, cfs_quota));
  }
  return tightest;
}

std::optional<unsigned> omp_num_threads(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (end == value || (*end != '\0' && *end != ',') || n <= 0 || n > 1 << 20) return std::nullopt;
  return static_cast<unsigned>(n);
}

std::vector<int> affinity_cpu_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

unsigned affinity_cpus() { return static_cast<unsigned>(std::max<std::size_t>(1, affinity_cpu_list().size())); }

CpuLimits cpu_limits_of_process(std::optional<std::size_t> flag) {
  CpuLimits l;
  l.affinity = affinity_cpus();
  l.quota = cgroup_quota();
  l.omp = omp_num_threads(std::getenv("OMP_NUM_THREADS"));
  // OpenBLAS's own variables, as it reads them (the first set wins).
  for (const char* name : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS"})
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') {
      l.blas = omp_num_threads(value);
      break;
    }
  if (flag) l.flag = static_cast<unsigned>(std::min<std::size_t>(*flag, 1u << 20));
  return l;
}

CpuCount cpus_of_process(std::optional<std::size_t> flag) { return cpu_count(cpu_limits_of_process(flag)); }

namespace {

// A cache size as sysfs writes it: "32768K", "1M", or bytes.
std::size_t cache_size_bytes(const std::string& text) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  const std::string unit(end);
  if (unit == "K") return static_cast<std::size_t>(n) << 10;
  if (unit == "M") return static_cast<std::size_t>(n) << 20;
  if (unit == "G") return static_cast<std::size_t>(n) << 30;
  return unit.empty() ? static_cast<std::size_t>(n) : 0;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

LastLevelCache last_level_cache(const std::string& sys, const std::vector<int>& cpus) {
  // (level, shared_cpu_list) -> bytes: an instance is the same cache for every CPU that lists it.
  std::map<std::pair<int, std::string>, std::size_t> instances;
  for (const int cpu : cpus)
    for (int index = 0; index < 16; ++index) {
      const std::string dir = sys + "/cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index);
      const std::string level = first_line(dir + "/level");
      if (level.empty()) break;
      if (first_line(dir + "/type") == "Instruction") continue;
      const std::size_t bytes = cache_size_bytes(first_line(dir + "/size"));
      if (bytes > 0) instances[{std::atoi(level.c_str()), first_line(dir + "/shared_cpu_list")}] = bytes;
    }
  LastLevelCache llc;
  for (const auto& [key, bytes] : instances) llc.level = std::max(llc.level, key.first);
  for (const auto& [key, bytes] : instances)
    if (key.first == llc.level) {
      llc.bytes += bytes;
      ++llc.instances;
    }
  return llc;
}

LastLevelCache last_level_cache_of_process() {
  // Read once: attn-bench asks when it checks the options and again when it runs, and by then the fast rows
  // may have bound the main thread to one CPU.
  static const LastLevelCache llc = last_level_cache("/sys/devices/system/cpu", affinity_cpu_list());
  return llc;
}

}  // namespace attn
