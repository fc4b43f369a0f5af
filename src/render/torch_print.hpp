#pragma once
// PyTorch's print(tensor) for a float32 CPU tensor with the default print options (precision 4,
// threshold 1000, edgeitems 3, linewidth 80), without suffixes such as grad_fn. The rules are those of
// torch/_tensor_str.py (PyTorch 1.13, which prints like the 2.4 the book used).
#include <string>

#include "core/tensor.hpp"

namespace attn {

// "tensor([0.9544, 1.4950])", "tensor(1.8524)", multi-line for rank >= 2, "..." past 1000 elements.
// With `integer`, as PyTorch prints an integer dtype: "tensor([0, 0, 1, 1])" (the values must be whole).
std::string torch_str(const AnyTensor& t, bool integer = false);

// torch.Size([6, 2]) for a shape.
std::string torch_size(const AnyTensor& t);

}  // namespace attn
