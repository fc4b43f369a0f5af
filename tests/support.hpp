#pragma once
// Helpers shared by the test files: run attn in-process exactly as the executable does, or the real
// executable through a shell.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>
#include <sys/wait.h>

#include "cli/cli.hpp"
#include "lessons/registry.hpp"

extern "C" char* openblas_get_corename(void);

namespace attn_test {

// The kernels OpenBLAS runs in this process (openblas_get_corename): "SkylakeX" on AVX-512 CPUs,
// "Haswell" or "Zen" on AVX2 ones. The AVX-512 kernels add a row's products in the same order whatever
// the number of rows; the AVX2 ones do not always, in PyTorch as in attn (tests/golden/blas_variants.py).
inline std::string blas_core() {
  const char* core = openblas_get_corename();
  return core == nullptr ? std::string("(unknown)") : std::string(core);
}
inline bool skylakex_kernels() {
  const std::string core = blas_core();
  return core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
}
inline bool haswell_kernels() { return blas_core() == "Haswell" || blas_core() == "Zen"; }

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

// The lessons' names, in registry (book) order: the tests ask the registry rather than keep a list.
inline std::vector<std::string> lesson_names() {
  std::vector<std::string> names;
  for (const auto& lesson : attn::lessons()) names.push_back(lesson.info.name);
  return names;
}

// run_cli in-process, as main() calls it.
inline Run run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Run r;
  r.status = attn::run_cli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A shell command's exit status and standard output (stderr goes where the command sends it).
inline Run shell(const std::string& command) {
  Run r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), got);
  const int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A scratch directory for files a test writes, removed at exit.
struct Scratch {
  Scratch() {
    char tmpl[] = "/tmp/attn-tests-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~Scratch() { std::system(("rm -rf " + quote(dir)).c_str()); }
  Scratch(const Scratch&) = delete;
  std::string file(const std::string& name, const std::string& content) const {
    std::ofstream(dir + "/" + name, std::ios::binary) << content;
    return dir + "/" + name;
  }
  std::string dir;
};

}  // namespace attn_test
