#pragma once
// What the process's surroundings are, as read from the system: which standard streams are terminals, how
// wide stdout's is, and what the environment says of colour and language. Raw facts only: the renderers
// decide what colour means (render/style.hpp), and the text layer which language a run speaks
// (text/language.hpp's language_of_environment).
#include <cstddef>
#include <map>
#include <string>

namespace attn {

// What run_cli knows of its surroundings; main fills it from the process, tests set it.
struct Terminal {
  bool stdin_tty = false;
  bool stdout_tty = false;
  bool stderr_tty = false;
  std::string no_color;   // $NO_COLOR
  std::string term;       // $TERM
  std::string colorterm;  // $COLORTERM ("truecolor" or "24bit" announce 24-bit colour)
  std::size_t columns = 0;  // stdout's terminal width (TIOCGWINSZ); 0 when unknown or not a terminal
  // The variables gettext reads for the language of messages, as set (LANGUAGE, LC_ALL, LC_MESSAGES, LANG;
  // one unset is absent): the command line reads its language from them (language_of_environment), and
  // --lang overrides it.
  std::map<std::string, std::string> locale;

  // A variable of `locale`, "" when unset.
  std::string locale_variable(const char* name) const;

  static Terminal of_process();
};

}  // namespace attn
