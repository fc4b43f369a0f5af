#include "render/style.hpp"

#include <cstdlib>
#include <sys/ioctl.h>
#include <unistd.h>

#include "text/words.hpp"

namespace attn {

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
  t.language = language_of_environment(env);
  winsize size{};
  if (t.stdout_tty && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) t.columns = size.ws_col;
  return t;
}

TextStyle resolve_style(When color, When heatmap, bool explain, bool quiet, const Terminal& term) {
  TextStyle style;
  const bool auto_color = term.stdout_tty && term.no_color.empty() && term.term != "dumb";
  style.color = color == When::Always || (color == When::Auto && auto_color);
  style.truecolor = style.color && (term.colorterm == "truecolor" || term.colorterm == "24bit");
  style.heatmaps = heatmap == When::Always || (heatmap == When::Auto && term.stdout_tty);
  style.explain = explain && !quiet;
  style.quiet = quiet;
  style.width = term.stdout_tty ? term.columns : 0;
  return style;
}

}  // namespace attn
