#include "render/web_assets.hpp"

#include <map>
#include <mutex>

#include "io/files.hpp"

namespace attn {

namespace {

// A page's style or script is tens of kilobytes; a megabyte is far past any.
constexpr FileKind kWebAsset{"a page's style or script", std::size_t{1} << 20};

}  // namespace

const std::string& web_asset(const std::string& name) {
  // attn serve renders pages on several threads at once; each file is read by the first to ask.
  static std::mutex mutex;
  static std::map<std::string, std::string> read;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = read.find(name);
  if (found != read.end()) return found->second;
  return read.emplace(name, read_bundled_file("web/" + name, kWebAsset, "the page's " + name)).first->second;
}

}  // namespace attn
