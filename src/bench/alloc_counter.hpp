#pragma once
// How much memory an implementation allocates at its peak, for attn bench: every operator new / delete
// of the program is counted (xtensor and std::vector allocate through them). Resident-set figures from
// /proc would hide memory the allocator reuses after a free.
#include <cstddef>

namespace attn::alloc_counter {

std::size_t live();        // bytes allocated through operator new and not yet deleted
std::size_t peak();        // the most `live` has been since the last reset_peak
std::size_t reset_peak();  // peak = live; returns live

}  // namespace attn::alloc_counter
