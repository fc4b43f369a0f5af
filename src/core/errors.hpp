#pragma once
// The two kinds of failure a user can cause, shared by every layer. The command line maps them to exit
// statuses in one place (cli/errors.cpp; docs/errors.md): a UsageError is exit 2, an InputError or SystemError exit 1.
#include <stdexcept>

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

}  // namespace attn
