#include "core/heap_budget.hpp"

#include <malloc.h>

#include <limits>

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
  outer_ = {t_state.armed, t_state.limit, t_state.grown};
  const std::size_t cap = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  t_state = {true, static_cast<std::int64_t>(limit < cap ? limit : cap), 0};
}

HeapBudget::~HeapBudget() {
  // The outer scope goes on counting from where it was, with what this one kept or freed.
  t_state = {outer_.armed, outer_.limit, outer_.grown + t_state.grown};
}

void HeapBudget::disarm() { t_state.armed = false; }
bool HeapBudget::armed() const { return t_state.armed; }

// Smaller allocations are counted but never refused: a plan's many small strings (a step's title and
// code) add up slowly, and refusing one of them would stop the run at a point that says nothing of what it
// needs. What passes a budget is a tensor, a file or a buffer: large blocks.
constexpr std::size_t kSmallest = std::size_t{1} << 20;

void HeapBudget::before_allocation(std::size_t bytes) {
  ThreadState& s = t_state;
  if (!s.armed || bytes < kSmallest) return;
  if (bytes > static_cast<std::size_t>(s.limit) || s.grown + static_cast<std::int64_t>(bytes) > s.limit) {
    s.armed = false;  // what unwinding allocates is not the run's
    throw Exceeded(bytes + static_cast<std::size_t>(s.grown > 0 ? s.grown : 0));
  }
}

void HeapBudget::allocated(void* block) noexcept {
  if (t_state.armed && block != nullptr) t_state.grown += block_size(block);
}

void HeapBudget::freeing(void* block) noexcept {
  if (t_state.armed && block != nullptr) t_state.grown -= block_size(block);
}

}  // namespace attn
