#pragma once
// The memory budget held while a run reads its inputs and plans its steps. The budget is checked on the
// plan's estimate (run/run.cpp), but making the plan already takes memory in proportion to the request:
// the inputs are read or drawn, a module's weights are drawn, the trace copies its inputs. A HeapBudget
// bounds that phase on the heap itself: while it is armed, an allocation of its thread that would take
// the heap past the limit is refused before it is made, by throwing HeapBudget::Exceeded, so a request
// past the budget is refused with the memory still within it (docs/errors.md, "The memory budget").
// Blocks under a mebibyte are counted but not refused (heap_budget.cpp says why).
//
// It counts through the program's operator new and delete (core/heap_budget_new.cpp, linked into attn
// and the tests only: attn-bench counts its own). In a program without them nothing is counted and the
// budget never fires; the plan's check still holds.
#include <cstddef>
#include <cstdint>
#include <new>

namespace attn {

class HeapBudget {
 public:
  // An allocation that would have taken the armed thread's heap past its limit. A std::bad_alloc, since
  // it is thrown where operator new throws.
  struct Exceeded : std::bad_alloc {
    explicit Exceeded(std::size_t bytes) : needed(bytes) {}
    const char* what() const noexcept override { return "the memory budget was reached"; }
    std::size_t needed;  // what the thread's heap had grown by, with the allocation refused
  };

  // Arms the calling thread: from now on, what it allocates less what it frees may grow by `limit`
  // bytes. One scope at a time on a thread (a std::logic_error otherwise): a run is never inside another.
  explicit HeapBudget(std::size_t limit);
  ~HeapBudget();
  HeapBudget(const HeapBudget&) = delete;
  HeapBudget& operator=(const HeapBudget&) = delete;

  // Stops counting: the plan passed its check, whose estimate bounds the rest of the run.
  void disarm();
  bool armed() const;

  // For the replaced operator new and delete: called before an allocation of `bytes` (throws Exceeded
  // if it would pass the limit, and stops counting: what unwinding allocates is not the run's), after it
  // with its block, and before a block is freed. The nothrow forms ask `would_pass` instead, and get no
  // block, with the budget still armed (a caller such as std::stable_sort's buffer tries a smaller one).
  static void before_allocation(std::size_t bytes);
  static bool would_pass(std::size_t bytes) noexcept;
  static void allocated(void* block) noexcept;
  static void freeing(void* block) noexcept;
};

}  // namespace attn
