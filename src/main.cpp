// attn: the executable only wires the process to run_cli. Output is produced whole before any of it
// is written (except step by step under --pause on a terminal), so a failure never leaves half a
// document on stdout; diagnostics and progress lines go straight to stderr.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/cli.hpp"
#include "kernels/blas.hpp"

int main(int argc, char** argv) {
  attn::restart_on_openblas_fallback(argv);  // returns unless OpenBLAS fell back to slow kernels
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int status = attn::run_cli(args, std::cout, std::cerr, std::cin, attn::Terminal::of_process());
  std::cout.flush();
  if (!std::cout) {
    std::fprintf(stderr, "attn: cannot write output: %s\n", std::strerror(errno));
    return attn::kExitRuntime;
  }
  return status;
}
