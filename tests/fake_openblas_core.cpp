// LD_PRELOADed by tests/test_cpus.cpp: OpenBLAS as it looks on a CPU it does not know. Debian's 0.3.21 fell
// back to its Prescott (SSE3) kernels on a 16-core Xeon; on the machines the tests run on it never does, and
// only OPENBLAS_CORETYPE makes it pick Prescott, which is also what tells attn not to restart. So this
// library answers openblas_get_corename() with "Prescott" while OPENBLAS_CORETYPE is unset, and with the real
// answer once it is set (as attn's restart sets it), and attn's restart runs end to end on any CPU.
#include <dlfcn.h>

#include <cstdlib>

extern "C" char* openblas_get_corename(void) {
  static char prescott[] = "Prescott";
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr) return prescott;
  using Corename = char* (*)(void);
  const auto real = reinterpret_cast<Corename>(::dlsym(RTLD_NEXT, "openblas_get_corename"));
  return real != nullptr ? real() : prescott;
}
