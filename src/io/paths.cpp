#include "io/paths.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace attn {

std::string executable_dir() {
  std::string buf(4096, '\0');
  const ssize_t len = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (len <= 0) return {};
  buf.resize(static_cast<std::size_t>(len));
  const auto slash = buf.rfind('/');
  return slash == std::string::npos ? std::string{} : buf.substr(0, slash);
}

namespace {

// The installed data directories, most specific first: $ATTN_DATA_DIR, ../share/attn beside the
// executable, the install prefix's.
std::vector<std::string> installed_data_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ATTN_DATA_DIR"); env != nullptr && *env != '\0') dirs.emplace_back(env);
  if (const std::string exe = executable_dir(); !exe.empty()) dirs.push_back(exe + "/../share/attn");
  dirs.emplace_back(ATTN_INSTALL_DATADIR);
  return dirs;
}

// The real path of the first dirs[i]/relative that is a regular file, or "".
std::string first_file(const std::vector<std::string>& dirs, const std::string& relative) {
  for (const auto& dir : dirs) {
    const std::string candidate = dir + "/" + relative;
    struct stat st{};
    if (::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    char resolved[PATH_MAX];  // shown to the user: /usr/local/share/attn/..., not .../bin/../share/...
    return ::realpath(candidate.c_str(), resolved) != nullptr ? std::string(resolved) : candidate;
  }
  return {};
}

// Whether this executable is its build tree's (attn, attn-bench or the tests where they were built), not an
// installed copy: looked at once, as every lookup of a bundled file asks.
bool in_build_tree() {
  static const bool built_here = [] {
    const std::string exe = executable_dir();
    char here[PATH_MAX], build[PATH_MAX];
    return !exe.empty() && ::realpath(exe.c_str(), here) != nullptr && ::realpath(ATTN_BUILD_DIR, build) != nullptr &&
           std::strcmp(here, build) == 0;
  }();
  return built_here;
}

// Where to look, with the source tree's `source` folder: run from its build tree, attn reads the data and
// names the scripts of its checkout before the install prefix's, not whatever copy an older `cmake
// --install` left in /usr/local (whose lesson words may lack a phrase the build asks for); installed, the
// install prefix's before a checkout that may have moved on since (and its own, beside it, first).
std::vector<std::string> search_dirs(const char* source) {
  std::vector<std::string> dirs = installed_data_dirs();
  dirs.insert(in_build_tree() ? dirs.end() - 1 : dirs.end(), source);
  return dirs;
}

}  // namespace

std::string find_data_file(const std::string& relative) { return first_file(search_dirs(ATTN_SOURCE_DATADIR), relative); }

std::string find_script(const std::string& name) { return first_file(search_dirs(ATTN_SOURCE_SCRIPTDIR), name); }

std::string data_dirs_text() {
  const std::vector<std::string> dirs = search_dirs(ATTN_SOURCE_DATADIR);  // in find_data_file's order
  return "$ATTN_DATA_DIR, ../share/attn next to the executable, " + dirs[dirs.size() - 2] + " and " + dirs.back();
}

}  // namespace attn
