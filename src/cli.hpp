#pragma once
// The whole command line in one call, so that tests run exactly what the executable runs.
#include <ostream>
#include <string>
#include <vector>

namespace attn {

// Exit statuses (docs/errors.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // unreadable or invalid input file, write error
inline constexpr int kExitUsage = 2;    // bad option, bad value, bad combination, unknown subcommand

// Parses `args` (without the program name), runs the chosen lesson and writes its whole output to
// `out`, or one line starting "attn: " to `err`. Returns the exit status.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace attn
