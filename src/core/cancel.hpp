#pragma once
// A run that may be stopped before it ends: attn serve gives each request a time limit, and stops the work
// in flight when it is told to stop. The run's thread holds a CancelScope; a lesson's computations check it
// between values (Trace's nodes, --model's blocks), the JSON and html renderers between rows and heads, and
// a stopped run throws Cancelled from there. The command line never sets one, so nothing is checked there.
#include <atomic>
#include <chrono>
#include <stdexcept>

namespace attn {

// The run was stopped: its time limit passed, or the server is stopping. `what()` says which.
struct Cancelled : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// When the run on this thread must stop: at `deadline`, or as soon as `*stop` is set.
struct CancelPoint {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* stop = nullptr;
  double limit_seconds = 0;  // for the message
};

// Sets the calling thread's CancelPoint for the scope's life (scopes nest: the outer one comes back).
class CancelScope {
 public:
  explicit CancelScope(const CancelPoint& point);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const CancelPoint* outer_;
};

// Throws Cancelled if this thread's run must stop; nothing when no CancelScope is set.
void check_cancelled();

}  // namespace attn
