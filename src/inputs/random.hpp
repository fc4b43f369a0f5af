#pragma once
// --random NxD: torch.rand(N, D) after torch.manual_seed(0), as the book's exercises make random inputs;
// the tokens are named x1..xN.
#include "inputs/source.hpp"

namespace attn {

InputSource random_source();

}  // namespace attn
