#pragma once
// Where this executable is, to find what is installed beside it (share/attn, libexec/attn).
#include <string>

namespace attn {

// The directory of the running executable (from /proc/self/exe), or "" if it cannot be read.
std::string executable_dir();

// A file bundled with attn ("journey.json", "gpt2/encoder.json"), looked for in $ATTN_DATA_DIR,
// ../share/attn beside the executable, the source tree's data/ (so a build tree reads its checkout's, not
// an older install's) and the installed data directory, in that order; its real path, or "" when none has it.
std::string find_data_file(const std::string& relative);
// A script shipped for users ("gpt2-tf-to-hf.py"), installed beside the data (share/attn): looked for in
// $ATTN_DATA_DIR, ../share/attn beside the executable, the source tree's scripts/ (so a build tree names
// its checkout's), then the installed data directory; its real path, or "" when none has it.
std::string find_script(const std::string& name);
// Where find_data_file looks, for messages: "$ATTN_DATA_DIR, ../share/attn next to the executable, ...".
std::string data_dirs_text();

}  // namespace attn
