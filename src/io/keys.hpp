#pragma once
// --pause's keys on a terminal: each key as it is pressed, so q quits at once (a line would wait for Enter).
// The terminal is put in non-canonical mode without echo (termios; ISIG stays, so Ctrl-C still stops attn)
// and set back as it was when the reader goes, and also when a signal ends or stops the process while it
// reads: a shell that does not restore the terminal itself (sh -c, a script) is not left without echo.
// No library reads one key without taking the screen (ncurses' cbreak() comes with initscr()), so this is
// termios by hand.
#include <termios.h>

namespace attn {

class TerminalKeys {
 public:
  enum class Key { Next, Quit };
  // Reads from `fd`, when it is a terminal whose mode can be set; otherwise ok() is false and nothing changed.
  explicit TerminalKeys(int fd);
  ~TerminalKeys();
  TerminalKeys(const TerminalKeys&) = delete;
  TerminalKeys& operator=(const TerminalKeys&) = delete;
  bool ok() const { return ok_; }
  // Waits for a key: Enter or space is Next; q, Q, Ctrl-D, the end of input, an error or a signal that
  // interrupts the read (--save-npy's, which ends the run after) are Quit. Other keys (arrows, letters) are
  // ignored.
  Key next();

 private:
  void restore();
  int fd_ = -1;  // the terminal this reader took, -1 if none
  bool ok_ = false;
};

}  // namespace attn
