// attn-bench: the benchmark behind `attn bench`, a program of its own in the manner of llm.c's dev/
// benchmarks. What it does to its process stays here: every allocation is counted (alloc_counter.cpp
// replaces the global operator new), glibc keeps freed memory (mallopt in run_bench), OpenBLAS threads
// are set around the fused kernels. `attn bench` checks the options, runs this with the same arguments,
// and passes its output on; it can also be run by hand from the build tree (build/attn-bench --help).
#include <cerrno>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>

#include "bench/bench.hpp"
#include "core/errors.hpp"
#include "cli/options.hpp"
#include "core/terminal_text.hpp"
#include "kernels/blas.hpp"
#include "render/json.hpp"

int main(int argc, char** argv) {
  using namespace attn;
  restart_on_openblas_fallback(argv);  // returns unless OpenBLAS fell back to slow kernels
  CommandLine parsed;
  const CommandLine defaults;
  CLI::App app{"attn-bench: times the chapter's multi-head attention implementations (what `attn bench` runs)",
               "attn-bench"};
  for (const OptionSpec* spec : options_in(Scope::Bench)) spec->add(&app, parsed, defaults, spec->help);
  bool progress = false;
  app.add_flag("--progress", progress, "A line on stderr as each implementation finishes");
  std::string dump_dir;
  app.add_option("--dump", dump_dir,
                 "Write x, the weights and mha's and gqa's outputs as .npy files into this existing folder, "
                 "and time nothing (for scripts/bench-ort.sh)")
      ->check(CLI::ExistingDirectory)
      ->type_name("DIR");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::cerr << "attn: " << visible(e.what()) << " (see 'attn bench --help')\n";
    return kExitUsage;
  }
  try {
    check_bench(parsed.bench);
    if (!dump_dir.empty()) {
      dump_bench(parsed.bench, dump_dir);
      return kExitOk;
    }
    const auto say = [progress](const std::string& what) {
      if (progress) std::cerr << "attn: bench: " << what << " done" << std::endl;
    };
    // The busy-machine warning is one line on stderr, as the progress lines are, whatever the format (the
    // JSON also holds it, as "busy_warning").
    const auto warn = [](const std::vector<NamedRange>& ranges) {
      if (const auto line = busy_warning(ranges)) std::cerr << *line << std::endl;
    };
    if (parsed.bench.decode) {
      const DecodeReport report = run_decode_bench(parsed.bench, say);
      warn(decode_ranges(report));
      std::cout << (parsed.output.json ? dump_json(decode_json(report)) : render_decode_text(report)) << std::flush;
    } else {
      const BenchReport report = run_bench(parsed.bench, say);
      warn(bench_ranges(report));
      std::cout << (parsed.output.json ? dump_json(bench_json(report)) : render_bench_text(report)) << std::flush;
    }
    if (!std::cout) {
      std::cerr << "attn: cannot write output: " << std::strerror(errno) << "\n";
      return kExitRuntime;
    }
    return kExitOk;
  } catch (...) {
    return report_failure(std::cerr, "bench");
  }
}
