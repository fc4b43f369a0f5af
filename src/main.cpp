// attn: the executable only wires the process to run_cli. Output is produced whole before any of it
// is written, so a failure never leaves half a document on stdout.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include "cli.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::ostringstream out, err;
  int status = attn::run_cli(args, out, err);

  const std::string text = out.str();
  if (!text.empty() && (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)) {
    std::fprintf(stderr, "attn: cannot write output: %s\n", std::strerror(errno));
    return attn::kExitRuntime;
  }
  const std::string diagnostics = err.str();
  std::fwrite(diagnostics.data(), 1, diagnostics.size(), stderr);
  return status;
}
