#include "core/cancel.hpp"

#include <cstdio>

namespace attn {

namespace {
thread_local const CancelPoint* current = nullptr;
}  // namespace

CancelScope::CancelScope(const CancelPoint& point) : outer_(current) { current = &point; }
CancelScope::~CancelScope() { current = outer_; }

void check_cancelled() {
  if (current == nullptr) return;
  if (current->stop != nullptr && current->stop->load(std::memory_order_relaxed))
    throw Cancelled("the server is stopping");
  if (std::chrono::steady_clock::now() >= current->deadline) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g s", current->limit_seconds);
    throw Cancelled(std::string("the computation took longer than the server's time limit of ") + limit +
                    " (attn serve --time-limit); ask for fewer tokens, dimensions or heads");
  }
}

}  // namespace attn
