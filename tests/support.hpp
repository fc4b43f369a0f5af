#pragma once
// Helpers shared by the test files: run attn in-process exactly as the executable does, or the real
// executable through a shell.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
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

// Registers a test case made from data when the program starts (one per golden configuration, one per
// documentation page): Catch2 v2 has no parameterised case whose instances ctest can list and run one by
// one. Catch copies the name and the tags, and owns the body from then on.
inline void register_case(const std::string& name, const std::string& tags, std::function<void()> body) {
  struct Body : Catch::ITestInvoker {
    explicit Body(std::function<void()> f_) : f(std::move(f_)) {}
    void invoke() const override { f(); }
    std::function<void()> f;
  };
  Catch::AutoReg registration(new Body(std::move(body)), CATCH_INTERNAL_LINEINFO, "", Catch::NameAndTags{name, tags});
}

// Registers the cases `each` names from data read at start-up (the golden index, the documentation pages).
// Data that cannot be read is one failing case that says why, not an exception before main that ends the
// program with no test run and no message.
inline void register_cases_from(const std::string& source, const std::function<void()>& each) {
  try {
    each();
  } catch (const std::exception& e) {
    const std::string why = e.what();
    register_case("the cases from " + source + " are registered", "", [why] { FAIL(why); });
  }
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

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A shell command's exit status, standard output and standard error (what the command does not send
// elsewhere itself), so that a helper script's error reaches the failure message.
inline Run shell(const std::string& command) {
  Run r;
  char err_path[] = "/tmp/attn-tests-stderr-XXXXXX";
  const int err_fd = ::mkstemp(err_path);
  if (err_fd < 0) return r;
  ::close(err_fd);
  FILE* pipe = ::popen(("{ " + command + "\n} 2>" + quote(err_path)).c_str(), "r");
  if (pipe != nullptr) {
    std::array<char, 4096> buf{};
    std::size_t got = 0;
    while ((got = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), got);
    const int raw = ::pclose(pipe);
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }
  std::ifstream err(err_path, std::ios::binary);
  r.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  std::remove(err_path);
  return r;
}

// A case that cannot run here ends as a skip, reported as one: under ctest, which sets
// ATTN_SKIP_RETURN_CODE to the SKIP_RETURN_CODE of every entry (CMakeLists.txt), the process ends with that
// code and ctest counts the case as skipped, never as passed. Outside ctest nothing would tell a skip from
// a pass, so it fails instead, and so does a skip a CI run does not allow (`allowed_in_ci` false: under
// CI=true the test command has installed every program a case needs).
[[noreturn]] inline void skip_case(const std::string& why, bool allowed_in_ci) {
  const char* ci = std::getenv("CI");
  const char* code = std::getenv("ATTN_SKIP_RETURN_CODE");
  if ((allowed_in_ci || ci == nullptr || std::string(ci) != "true") && code != nullptr) {
    std::fprintf(stderr, "skipped: %s\n", why.c_str());
    std::fflush(nullptr);
    std::_Exit(std::atoi(code));
  }
  FAIL(why);
  std::abort();  // FAIL throws; never reached
}

// A program a tier of tests needs (Chromium, tmux): missing, the case is a skip, and a failure under CI.
inline void need_program(const std::string& path, const std::string& package) {
  if (::access(path.c_str(), X_OK) == 0) return;
  skip_case(path + " is missing (bash scripts/test.sh installs " + package + ")", false);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif

// A case that measures memory or limits address space means nothing under AddressSanitizer, whose
// allocator and shadow memory are not attn's: there it is a skip (the sanitizer pass does not run those
// tiers; docs/testing.md).
inline void not_under_asan(const std::string& why) {
  if (kUnderAsan) skip_case("under AddressSanitizer: " + why, true);
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
