#pragma once
// The kinds of failure, shared by every layer, and the one place they become exit statuses and the one line
// a failure prints (report_failure; docs/errors.md), the same for every subcommand and for attn-bench: a
// UsageError is exit 2, an InputError or SystemError exit 1.
#include <ostream>
#include <stdexcept>
#include <string>

namespace attn {

// An option value that cannot work with these inputs (e.g. --query past the last token): reported like a
// bad option, with exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A file the user gave us is unreadable or malformed: the message names the file and the place. Exit 1.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The system failed us (a helper program is missing or died): exit 1, the message says what happened.
struct SystemError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // unreadable or invalid input file, write error, out of memory
inline constexpr int kExitUsage = 2;    // bad option, bad value, bad combination, unknown subcommand

// Call inside a catch (...): writes "attn: ..." for the exception being handled to `err` and returns its
// exit status. `command` names the subcommand whose --help a usage error points to ("" for attn itself).
int report_failure(std::ostream& err, const std::string& command);

}  // namespace attn
