#pragma once
// The default renderer: each step's title, explanation, PyTorch code and shape, then its tensor
// printed exactly as PyTorch's print() shows it, so it can be laid beside the book; weight matrices
// can also be drawn as heatmaps.
#include <string>
#include <vector>

#include "lessons/lesson.hpp"
#include "render/style.hpp"

namespace attn {

// The text view in pieces: the lesson's header, then one piece per step (what --pause shows at a time).
std::vector<std::string> render_text_chunks(const Trace& trace, const TextStyle& style);

// All pieces joined.
std::string render_text(const Trace& trace, const TextStyle& style = {});

// torch.Size([6, 2]) for a shape.
std::string torch_size(const AnyTensor& t);

}  // namespace attn
