#include "core/heap_budget.hpp"

#include <malloc.h>

#include <limits>
#include <stdexcept>

namespace attn {

namespace {

// Plain data, so that operator new may read it on any thread at any time, before any constructor ran.
struct ThreadState {
  bool armed;
  std::int64_t limit;
  std::int64_t grown;
};
thread_local ThreadState t_state{false, 0, 0};

std::int64_t block_size(void* block) noexcept {
  // The size malloc gave the block, as operator delete does not always know it (glibc).
  return static_cast<std::int64_t>(malloc_usable_size(block));
}

}  // namespace

HeapBudget::HeapBudget(std::size_t limit) {
  if (t_state.armed) throw std::logic_error("HeapBudget: a scope is armed on this thread already");
  const std::size_t cap = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  t_state = {true, static_cast<std::int64_t>(limit < cap ? limit : cap), 0};
}

HeapBudget::~HeapBudget() { t_state = {false, 0, 0}; }

void HeapBudget::disarm() { t_state.armed = false; }
bool HeapBudget::armed() const { return t_state.armed; }

// Smaller allocations are counted but never refused: a plan's many small strings (a step's title and
// code, a token's text) add up slowly, and refusing one of them would stop the run at a point that says
// nothing of what it needs, a mebibyte at a time. What they hold is in the plan's estimate instead
// (Trace::text_bytes), checked as each lesson's plan is made. What passes a budget at once is a tensor, a
// file or a buffer: large blocks.
constexpr std::size_t kSmallest = std::size_t{1} << 20;

bool HeapBudget::would_pass(std::size_t bytes) noexcept {
  const ThreadState& s = t_state;
  if (!s.armed || bytes < kSmallest) return false;
  return bytes > static_cast<std::size_t>(s.limit) || s.grown + static_cast<std::int64_t>(bytes) > s.limit;
}

void HeapBudget::before_allocation(std::size_t bytes) {
  if (!would_pass(bytes)) return;
  ThreadState& s = t_state;
  s.armed = false;  // what unwinding allocates is not the run's
  throw Exceeded(bytes + static_cast<std::size_t>(s.grown > 0 ? s.grown : 0));
}

void HeapBudget::allocated(void* block) noexcept {
  if (t_state.armed && block != nullptr) t_state.grown += block_size(block);
}

void HeapBudget::freeing(void* block) noexcept {
  if (t_state.armed && block != nullptr) t_state.grown -= block_size(block);
}

}  // namespace attn
