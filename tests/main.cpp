// The Catch2 (v2) test runner's main; every other tests/*.cpp holds test cases only.
// Catch2's own main exits with the number of failed assertions, so a case with exactly 77 failures would
// end with ctest's SKIP_RETURN_CODE (77, tests/support.hpp's skip_case) and count as skipped. Any failure
// here ends with 1 instead; only skip_case ends with 77.
// The programs the tests start speak English whatever the developer's locale: attn takes its language from
// LANGUAGE, LC_ALL, LC_MESSAGES and LANG (--lang aside), so they are set to C here, and a case that wants
// another language says so on its command line.
// The cases compute in this process with the kernels attn would run: where OpenBLAS falls back to its slow
// Prescott kernels on a CPU it does not know (Debian's 0.3.21 on an Emerald Rapids Xeon), the runner
// restarts itself with the better core as attn's main does, and then forgets that it did
// (ATTN_OPENBLAS_FELL_BACK), so that its cases and the programs they start run as on a CPU OpenBLAS knows.
// tests/test_cpus.cpp checks the restart and its note, with both variables taken out of the environment.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

#include "kernels/blas.hpp"

int main(int argc, char* argv[]) {
  attn::restart_on_openblas_fallback(argv);  // returns unless OpenBLAS fell back to slow kernels
  ::unsetenv("ATTN_OPENBLAS_FELL_BACK");
  ::unsetenv("LANGUAGE");
  ::unsetenv("LC_MESSAGES");
  ::setenv("LC_ALL", "C.UTF-8", 1);
  return Catch::Session().run(argc, argv) == 0 ? 0 : 1;
}
