#include "kernels/blas.hpp"

#include <strings.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include <cblas.h>

#include "core/terminal_text.hpp"
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

// Whether this OpenBLAS chooses its kernels when it loads (DYNAMIC_ARCH, as Debian's does), so that
// OPENBLAS_CORETYPE means anything to it; a build for one core names that core and ignores the variable.
bool openblas_chooses_kernels() {
  const char* config = openblas_get_config();
  return config != nullptr && std::strstr(config, "DYNAMIC_ARCH") != nullptr;
}

}  // namespace

void set_compute_threads(unsigned threads) {
  threads = std::max(1u, threads);
  threads_slot() = threads;
  openblas_set_num_threads(static_cast<int>(threads));
}

unsigned compute_threads() {
  unsigned threads = threads_slot();
  if (threads == 0) {  // not set: the process's count, read once (GPT-2 asks for it at every block)
    threads = cpus_of_process().threads;
    unsigned unset = 0;
    threads_slot().compare_exchange_strong(unset, threads);
  }
  return threads;
}

std::string openblas_core() {
  const char* core = openblas_get_corename();
  return core == nullptr ? std::string() : std::string(core);
}

bool core_in_golden_families(const std::string& core) {
  // Either case: a build for one core names it in capitals ("SKYLAKEX"), a DYNAMIC_ARCH build as "SkylakeX".
  for (const char* family : {"SkylakeX", "Cooperlake", "SapphireRapids", "Haswell", "Zen"})
    if (::strcasecmp(core.c_str(), family) == 0) return true;
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
  // Run through the dynamic loader (ld.so ./attn ...): /proc/self/exe is the loader, which would read the
  // first argument as the program. Its auxiliary vector then has no interpreter base.
  if (::getauxval(AT_BASE) == 0 || !openblas_chooses_kernels()) return;
  const std::string core = openblas_core();
  const std::optional<std::string> better = better_openblas_core(core, cpu_has_avx512(), cpu_has_avx2_fma());
  if (!better) return;
  // OpenBLAS reads OPENBLAS_CORETYPE once, as it loads: only a new process image takes it.
  if (::setenv("OPENBLAS_CORETYPE", better->c_str(), 1) == 0 && ::setenv(kFellBack, core.c_str(), 1) == 0)
    ::execv("/proc/self/exe", argv);
  // The restart failed: go on as OpenBLAS chose, with the environment as it was (a --model run and attn
  // bench then say which kernels run, and what would run the right ones).
  ::unsetenv("OPENBLAS_CORETYPE");
  ::unsetenv(kFellBack);
}

std::optional<std::string> openblas_core_warning() {
  const std::string core = openblas_core();
  const char* fell_back = std::getenv(kFellBack);
  if (core_in_golden_families(core)) {
    if (fell_back == nullptr) return std::nullopt;
    // The variable is the environment's, which anyone may set: its text shown escaped, as any from outside.
    return "OpenBLAS chose its " + visible(fell_back) + " kernels on this CPU, which it did not know; attn "
           "runs it with OPENBLAS_CORETYPE=" + core + " instead (the same numbers as the book's, several times faster)";
  }
  const std::optional<std::string> better = better_openblas_core(core, cpu_has_avx512(), cpu_has_avx2_fma());
  if (!better) return std::nullopt;
  const char* asked = std::getenv("OPENBLAS_CORETYPE");
  const std::string what = "OpenBLAS runs its " + (core.empty() ? std::string("unnamed") : visible(core)) + " kernels" +
                           (asked != nullptr ? " (OPENBLAS_CORETYPE is set)" : "") + " on a CPU that runs " + *better +
                           "'s: the lessons' products run several times slower, and their numbers may differ from "
                           "the book's in the last digits; ";
  if (!openblas_chooses_kernels())
    return what + "this OpenBLAS was built for one core (no DYNAMIC_ARCH), so only another build (Debian's "
                  "libopenblas0 chooses at run time) runs the right ones";
  return what + "OPENBLAS_CORETYPE=" + *better + " runs the right ones";
}

}  // namespace attn
