#include "io/terminal.hpp"

#include <cstdlib>
#include <sys/ioctl.h>
#include <unistd.h>

namespace attn {

std::string Terminal::locale_variable(const char* name) const {
  const auto it = locale.find(name);
  return it == locale.end() ? std::string{} : it->second;
}

Terminal Terminal::of_process() {
  Terminal t;
  t.stdin_tty = ::isatty(STDIN_FILENO) == 1;
  t.stdout_tty = ::isatty(STDOUT_FILENO) == 1;
  t.stderr_tty = ::isatty(STDERR_FILENO) == 1;
  const auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? std::string{} : std::string(v);
  };
  t.no_color = env("NO_COLOR");
  t.term = env("TERM");
  t.colorterm = env("COLORTERM");
  for (const char* name : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"})
    if (const char* v = std::getenv(name)) t.locale[name] = v;
  winsize size{};
  if (t.stdout_tty && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) t.columns = size.ws_col;
  return t;
}

}  // namespace attn
