#include "io/paths.hpp"

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

}  // namespace attn
