// libFuzzer target: the command line. The input is argv, one argument per line (a line "--" alone
// starts standard input, which --input - reads). run_cli must exit 0, 1 or 2; a failure is one
// "attn: " line and nothing on stdout, never an internal error; output without --color holds no
// control byte but line feeds, and --json output is strict JSON (output_checks.hpp). Built by
// scripts/fuzz.sh with the dictionary attn-docgen fuzz-dict writes from the registry and the option table.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "output_checks.hpp"

namespace {

// What the target never runs: what leaves the process (attn bench starts attn-bench; attn serve listens on
// the network until it is stopped, and has its own hostile tests, tests/test_serve.cpp; --save-npy writes
// files; --input FILE reads any path, a FIFO among them) or is slow by design (large --random sizes are
// held to a small memory budget instead).
bool excluded(const std::string& arg) {
  return arg == "bench" || arg == "serve" || arg.rfind("--save-npy", 0) == 0 || (arg.rfind("--input", 0) == 0 && arg != "--input") ||
         arg.rfind("--max-memory", 0) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  std::string stdin_text;
  std::size_t at = 0;
  while (at <= bytes.size()) {
    const std::size_t end = std::min(bytes.find('\n', at), bytes.size());
    const std::string arg = bytes.substr(at, end - at);
    at = end + 1;
    if (arg == "--") {
      stdin_text = at < bytes.size() ? bytes.substr(at) : std::string();
      break;
    }
    if (excluded(arg)) return 0;
    args.push_back(arg);
    if (args.size() > 1 && args[args.size() - 2] == "--input" && arg != "-") return 0;  // a path: not read
  }
  if (args.empty()) return 0;
  bool colour = false, json = false;
  for (const auto& a : args) {
    colour = colour || a.rfind("--color", 0) == 0;
    json = json || a == "--json" || a.rfind("--format", 0) == 0;
  }
  if (args.front() != "list") args.insert(args.end(), {"--max-memory", "192M"});  // keeps every run short
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  const int status = attn::run_cli(args, out, err, in, attn::Terminal{});
  if (status != 0) {
    attn_fuzz::check_failure(status, out.str(), err.str());
    return 0;
  }
  attn_fuzz::check(err.str().empty());
  attn_fuzz::check_terminal_safe(out.str(), colour);
  if (json && out.str().rfind("{", 0) == 0) attn_fuzz::check_strict_json(out.str());
  return 0;
}
