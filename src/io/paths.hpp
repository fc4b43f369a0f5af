#pragma once
// Where this executable is, to find what is installed beside it (share/attn, libexec/attn).
#include <string>

namespace attn {

// The directory of the running executable (from /proc/self/exe), or "" if it cannot be read.
std::string executable_dir();

}  // namespace attn
