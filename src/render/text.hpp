#pragma once
// The default renderer: each step's title, explanation, PyTorch code and shape, then its tensor
// printed exactly as PyTorch's print() shows it, so it can be laid beside the book.
#include <string>

#include "lessons/lesson.hpp"

namespace attn {

std::string render_text(const Trace& trace);

// torch.Size([6, 2]) for a shape.
std::string torch_size(const AnyTensor& t);

}  // namespace attn
