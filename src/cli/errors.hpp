#pragma once
// Exit statuses and the one line a failure prints (docs/errors.md), the same for every subcommand and for
// the attn-bench program.
#include <ostream>
#include <string>

namespace attn {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // unreadable or invalid input file, write error, out of memory
inline constexpr int kExitUsage = 2;    // bad option, bad value, bad combination, unknown subcommand

// Call inside a catch (...): writes "attn: ..." for the exception being handled to `err` and returns its
// exit status. `command` names the subcommand whose --help a usage error points to ("" for attn itself).
int report_failure(std::ostream& err, const std::string& command);

}  // namespace attn
