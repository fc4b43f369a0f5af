#include "io/keys.hpp"

#include <array>
#include <cstddef>
#include <csignal>
#include <unistd.h>

namespace attn {

namespace {

// What a signal handler needs to set the terminal back: async-signal-safe, so plain globals.
int g_fd = -1;
struct termios g_cooked {};  // the mode the terminal had
struct termios g_keys {};    // the one the reader sets

// The signals that end the process (SIGTSTP stops it) while a key is awaited. Each is handled only when
// its handling is the default: one the process ignores stays ignored, and one that emit's --save-npy
// staging notes (its handler, no SA_RESTART) interrupts the read instead, which then quits normally.
constexpr std::array<int, 5> kSignals{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};
std::array<struct sigaction, kSignals.size()> g_old{};
std::array<bool, kSignals.size()> g_handled{};

void handle(int signal);

extern "C" void keys_on_signal(int signal) {
  ::tcsetattr(g_fd, TCSANOW, &g_cooked);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(signal, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signal);  // handled as by default, here and now: the process ends, or stops until continued
  // Continued after Ctrl-Z (or never stopped: a stop signal to an orphaned process group is discarded):
  // keys again, and Ctrl-Z handled again.
  ::tcsetattr(g_fd, TCSANOW, &g_keys);
  handle(signal);
}

void handle(int signal) {
  struct sigaction on {};
  on.sa_handler = keys_on_signal;
  on.sa_flags = SA_RESTART;  // after Ctrl-Z and fg, the read goes on
  sigemptyset(&on.sa_mask);
  ::sigaction(signal, &on, nullptr);
}

}  // namespace

TerminalKeys::TerminalKeys(int fd) {
  if (g_fd != -1 || ::isatty(fd) != 1 || ::tcgetattr(fd, &g_cooked) != 0) return;  // one reader at a time
  g_keys = g_cooked;
  g_keys.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  g_keys.c_cc[VMIN] = 1;
  g_keys.c_cc[VTIME] = 0;
  g_fd = fd_ = fd;
  for (std::size_t i = 0; i < kSignals.size(); ++i) {
    ::sigaction(kSignals[i], nullptr, &g_old[i]);
    g_handled[i] = g_old[i].sa_handler == SIG_DFL;
    if (g_handled[i]) handle(kSignals[i]);
  }
  ok_ = ::tcsetattr(fd, TCSANOW, &g_keys) == 0;
  if (!ok_) restore();
}

TerminalKeys::~TerminalKeys() { restore(); }

void TerminalKeys::restore() {
  if (fd_ == -1) return;  // never took the terminal (or gave it back already)
  ::tcsetattr(fd_, TCSANOW, &g_cooked);
  for (std::size_t i = 0; i < kSignals.size(); ++i)
    if (g_handled[i]) ::sigaction(kSignals[i], &g_old[i], nullptr);
  g_fd = fd_ = -1;
  ok_ = false;
}

TerminalKeys::Key TerminalKeys::next() {
  for (;;) {
    char c = 0;
    if (::read(fd_, &c, 1) != 1) return Key::Quit;  // the end, an error, or a signal that stops the run
    if (c == '\n' || c == '\r' || c == ' ') return Key::Next;
    if (c == 'q' || c == 'Q' || c == '\x04') return Key::Quit;
  }
}

}  // namespace attn
