#pragma once
// The default renderer: each step's title, explanation, PyTorch code and shape, then its tensor printed
// exactly as PyTorch's print() shows it, so it can be laid beside the book; weight matrices can also be
// drawn as heatmaps. Its pieces are the header and one per step, which is where --pause waits.
#include <string>

#include "render/renderer.hpp"

namespace attn {

std::unique_ptr<Renderer> make_text_renderer(const RenderOptions& options);

// One lesson's text view, whole (for tests and the fuzzer).
std::string render_text(const Section& trace, const TextStyle& style = {});

}  // namespace attn
