#pragma once
// A real terminal for the tests: tmux runs a command in a window of a given size, and capture-pane reads
// the screen back. Each Tmux is a tmux server of its own (socket attn-tests-<pid>-<n>), stopped when it goes:
// a server that was just told to quit can still hold its socket for a moment, and a new session on it then
// fails with "server exited unexpectedly".
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include <unistd.h>

#include "support.hpp"

namespace attn_test {

class Tmux {
 public:
  Tmux(std::size_t width, std::size_t height, const std::string& command, const std::string& env = "") {
    sock_ = "attn-tests-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++);
    // The shell runs attn, then says how it ended and what the terminal is left like.
    const std::string script = "env TERM=tmux-256color LANG=C.UTF-8 " + env + " " + command +
                               "; echo attn-exited-$?; echo tty: $(stty -a | tr ' ;' '\\n\\n' | "
                               "grep -xE -- '-?(echo|icanon)' | sort); sleep 60";
    const auto started = shell(tmux() + "-f /dev/null new-session -d -s t -x " + std::to_string(width) + " -y " +
                               std::to_string(height) + " " + quote(script));
    ok_ = started.status == 0;
    error_ = started.err;
  }
  ~Tmux() { shell(tmux() + "kill-server 2>/dev/null"); }
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;
  // Whether the session started; if not, error() is what tmux said.
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  std::string screen(bool colours = false) const {
    return shell(tmux() + "capture-pane -p " + (colours ? "-e " : "") + "-t t").out;
  }
  // True once `text` is on the screen (or, with present = false, once it is gone), within 10 s.
  bool wait_for(const std::string& text, bool present = true) const {
    for (int i = 0; i < 200; ++i) {
      if ((screen().find(text) != std::string::npos) == present) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    UNSCOPED_INFO("screen:\n" << screen());
    return false;
  }
  void keys(const std::string& keys) const { shell(tmux() + "send-keys -t t " + keys); }
  void resize(std::size_t width, std::size_t height) const {
    shell(tmux() + "resize-window -t t -x " + std::to_string(width) + " -y " + std::to_string(height));
  }
  std::string format(const std::string& f) const { return shell(tmux() + "display -p -t t " + quote(f)).out; }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string tmux() const { return "tmux -L " + sock_ + " "; }
  std::string sock_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace attn_test
