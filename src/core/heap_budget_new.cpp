// The program's operator new and delete, counted for HeapBudget (core/heap_budget.hpp): linked into attn
// and the tests, not into attn-bench, which replaces them with its own counter (bench/alloc_counter.cpp).
// Written here because no library bounds one thread's allocations while a phase of its work runs: the
// operators are the one place every allocation of xtensor, std::vector and std::string passes.
#include <cstdlib>
#include <new>

#include "core/heap_budget.hpp"

namespace {

void* budgeted(std::size_t n) {
  attn::HeapBudget::before_allocation(n);
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  attn::HeapBudget::allocated(p);
  return p;
}

void* budgeted_nothrow(std::size_t n) noexcept {
  if (attn::HeapBudget::would_pass(n)) return nullptr;  // refused, the budget still armed
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p != nullptr) attn::HeapBudget::allocated(p);
  return p;
}

void release(void* p) noexcept {
  attn::HeapBudget::freeing(p);
  std::free(p);
}

}  // namespace

// The replaceable global allocation functions; the over-aligned ones keep their defaults (aligned_alloc and
// free), and nothing attn allocates is over-aligned.
void* operator new(std::size_t n) { return budgeted(n); }
void* operator new[](std::size_t n) { return budgeted(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return budgeted_nothrow(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return budgeted_nothrow(n); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
