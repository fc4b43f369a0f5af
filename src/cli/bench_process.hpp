#pragma once
// `attn bench` runs in its own process, the attn-bench program (src/bench/main.cpp), so that what the
// benchmark does to a process (it counts every allocation by replacing operator new, keeps freed memory
// with mallopt, sets BLAS threads) never touches a lesson run.
#include <ostream>
#include <string>
#include <vector>

namespace attn {

// attn-bench beside this executable (the build tree), in ../libexec/attn (an installed tree, relocated
// or not), or in the configured libexec directory; a SystemError naming the places if none is there.
std::string bench_executable();

// Runs attn-bench with `args`. Its standard output is written to `out` whole once it has succeeded; its
// standard error goes to `err` as it comes (progress lines, or its one error line). Returns its exit
// status.
int run_bench_process(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attn
