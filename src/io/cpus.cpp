#include "io/cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace attn {

CpuCount cpu_count(const CpuLimits& l) {
  CpuCount out{std::max(1u, l.affinity), "affinity mask"};
  const auto cap = [&](std::optional<unsigned> n, const char* source) {
    if (n && *n < out.threads) out = {std::max(1u, *n), source};
  };
  if (l.quota) cap(static_cast<unsigned>(std::max(1.0, std::ceil(*l.quota - 1e-9))), "cgroup cpu.max");
  cap(l.omp, "OMP_NUM_THREADS");
  cap(l.flag, "--threads");
  return out;
}

std::optional<double> cpu_max_quota(const std::string& path) {
  std::ifstream in(path);
  std::string quota, period;
  if (!(in >> quota >> period) || quota == "max") return std::nullopt;
  char* end = nullptr;
  const double q = std::strtod(quota.c_str(), &end);
  if (end == quota.c_str() || *end != '\0') return std::nullopt;
  const double p = std::strtod(period.c_str(), &end);
  if (end == period.c_str() || *end != '\0' || !(q > 0) || !(p > 0)) return std::nullopt;
  return q / p;
}

std::optional<double> cgroup_quota(const std::string& root, const std::string& self) {
  std::ifstream in(self);
  std::string path;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("0::", 0) == 0) path = line.substr(3);  // cgroup v2's one hierarchy
  if (path.empty() || path.front() != '/') return std::nullopt;
  std::optional<double> tightest;
  while (true) {
    const std::optional<double> q = cpu_max_quota(root + (path == "/" ? "" : path) + "/cpu.max");
    if (q && (!tightest || *q < *tightest)) tightest = q;
    if (path == "/") return tightest;
    const std::size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

std::optional<unsigned> omp_num_threads(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (end == value || (*end != '\0' && *end != ',') || n <= 0 || n > 1 << 20) return std::nullopt;
  return static_cast<unsigned>(n);
}

unsigned affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

CpuLimits cpu_limits_of_process(std::optional<unsigned> flag) {
  CpuLimits l;
  l.affinity = affinity_cpus();
  l.quota = cgroup_quota();
  l.omp = omp_num_threads(std::getenv("OMP_NUM_THREADS"));
  l.flag = flag;
  return l;
}

}  // namespace attn
