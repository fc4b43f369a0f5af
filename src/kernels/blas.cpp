#include "kernels/blas.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include <cblas.h>

#include "io/cpus.hpp"

namespace attn {

namespace {

std::atomic<unsigned>& threads_slot() {
  static std::atomic<unsigned> threads{0};  // 0: not set
  return threads;
}

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
bool cpu_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

constexpr const char* kFellBack = "ATTN_OPENBLAS_FELL_BACK";

}  // namespace

void set_compute_threads(unsigned threads) {
  threads = std::max(1u, threads);
  threads_slot() = threads;
  openblas_set_num_threads(static_cast<int>(threads));
}

unsigned compute_threads() {
  const unsigned set = threads_slot();
  return set != 0 ? set : cpus_of_process().threads;
}

std::string openblas_core() {
  const char* core = openblas_get_corename();
  return core == nullptr ? std::string() : std::string(core);
}

bool core_in_golden_families(const std::string& core) {
  for (const char* family : {"SkylakeX", "Cooperlake", "SapphireRapids", "Haswell", "Zen"})
    if (core == family) return true;
  return false;
}

std::optional<std::string> better_openblas_core(const std::string& core, bool avx512, bool avx2_fma) {
  if (core_in_golden_families(core)) return std::nullopt;
  if (avx512) return std::string("SkylakeX");
  if (avx2_fma) return std::string("Haswell");
  return std::nullopt;
}

void restart_on_openblas_fallback(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || std::getenv(kFellBack) != nullptr) return;
  const std::string core = openblas_core();
  const std::optional<std::string> better = better_openblas_core(core, cpu_has_avx512(), cpu_has_avx2_fma());
  if (!better) return;
  // OpenBLAS reads OPENBLAS_CORETYPE once, as it loads: only a new process image takes it.
  if (::setenv("OPENBLAS_CORETYPE", better->c_str(), 1) != 0 || ::setenv(kFellBack, core.c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  ::unsetenv("OPENBLAS_CORETYPE");  // the restart failed: go on as OpenBLAS chose, and say so
}

std::optional<std::string> openblas_core_warning() {
  const std::string core = openblas_core();
  const char* fell_back = std::getenv(kFellBack);
  if (core_in_golden_families(core)) {
    if (fell_back == nullptr) return std::nullopt;
    return "OpenBLAS chose its " + std::string(fell_back) + " kernels on this CPU, which it did not know; attn "
           "runs it with OPENBLAS_CORETYPE=" + core + " instead (the same numbers as the book's, several times faster)";
  }
  const std::optional<std::string> better = better_openblas_core(core, cpu_has_avx512(), cpu_has_avx2_fma());
  if (!better) return std::nullopt;
  const char* asked = std::getenv("OPENBLAS_CORETYPE");
  return "OpenBLAS runs its " + (core.empty() ? std::string("unnamed") : core) + " kernels" +
         (asked != nullptr ? " (OPENBLAS_CORETYPE is set)" : "") + " on a CPU that runs " + *better +
         "'s: the lessons' products run several times slower, and their numbers may differ from the book's in the "
         "last digits; OPENBLAS_CORETYPE=" + *better + " runs the right ones";
}

}  // namespace attn
