#pragma once
// Where this executable is, to find what is installed beside it (share/attn, libexec/attn).
#include <string>

namespace attn {

// The directory of the running executable (from /proc/self/exe), or "" if it cannot be read.
std::string executable_dir();

// A file bundled with attn ("journey.json", "gpt2/encoder.json"), looked for in $ATTN_DATA_DIR,
// ../share/attn beside the executable, then the installed data directory and the source tree's data/ (in
// the build tree, the source tree's first: a build reads its checkout's data, not an older install's); its
// real path, or "" when none has it.
std::string find_data_file(const std::string& relative);
// A script shipped for users ("gpt2-tf-to-hf.py"), installed beside the data (share/attn): looked for in
// $ATTN_DATA_DIR, ../share/attn beside the executable, then the installed data directory and the source
// tree's scripts/, in the order find_data_file takes them; its real path, or "" when none has it.
std::string find_script(const std::string& name);
// Where find_data_file looks, for messages: "$ATTN_DATA_DIR, ../share/attn next to the executable, ...".
std::string data_dirs_text();

}  // namespace attn
