#pragma once
// What chapter 4's lessons share: their mode (the book's own example tensors, no --input or --random, no
// --model layer) and the book's random example tensors drawn as PyTorch draws them.
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"
#include "core/torch_random.hpp"
#include "lessons/registry.hpp"

namespace attn {

// torch.randn(shape...) and torch.rand(shape...) from `gen`, as PyTorch 1.13 fills a new contiguous tensor.
AnyTensor randn(TorchGenerator& gen, const std::vector<std::size_t>& shape);
AnyTensor rand(TorchGenerator& gen, const std::vector<std::size_t>& shape);

// A lesson of chapter 4 on the book's own example tensors: it takes no input (--input, --random, --text
// are refused) and no --model layer, and says why.
LessonMode chapter4_mode(std::vector<OptionUse> options, LessonConfig defaults, LessonMode::Run run);

}  // namespace attn
