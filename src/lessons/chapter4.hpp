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

// torch.linspace(start, end, steps) in float32 as PyTorch 1.13's CPU kernel computes it with its AVX2 vectors
// (the capability it uses on every x86-64 CPU unless ATEN_CPU_CAPABILITY says otherwise): 8 values at a time
// from a base, the first half counted up from start and the second down from end, the last few alone, each
// product and sum fused as the kernel's FMA build does.
AnyTensor linspace(float start, float end, std::size_t steps);  // (steps,)

// A lesson of chapter 4 on the book's own example tensors: it takes no input (--input, --random, --text
// are refused) and no --model layer, and says why.
LessonMode chapter4_mode(std::vector<OptionUse> options, LessonConfig defaults, LessonMode::Run run);

}  // namespace attn
