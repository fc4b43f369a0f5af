// The output formats: one line each in ATTN_FORMATS (name, whether --pause applies, help). A format's file
// defines `std::unique_ptr<Renderer> make_NAME_renderer(const RenderOptions&)`.
#include <algorithm>

#include "render/renderer.hpp"

#define ATTN_FORMATS(X)                                                                                      \
  X(text, true, "the book's view: titles, explanations, the PyTorch code and every tensor as PyTorch prints it") \
  X(json, false, "one JSON document with every step's tensor (docs/json.md)")                                    \
  X(html, false, "one self-contained web page: every step, heatmaps, slides, print to PDF (docs/html.md)")     \
  X(svg, false, "one figure for slides: the heatmap or table of the step chosen with --step (docs/html.md)") \
  X(py, false, "a Python script that reruns these steps with PyTorch and prints the same tensors (docs/notebook.md)") \
  X(ipynb, false, "the same as a Jupyter notebook, each step's output already in it (docs/notebook.md)")

namespace attn {

#define ATTN_DECLARE_FORMAT(name, pausable, help) std::unique_ptr<Renderer> make_##name##_renderer(const RenderOptions&);
ATTN_FORMATS(ATTN_DECLARE_FORMAT)
#undef ATTN_DECLARE_FORMAT

const std::vector<Format>& formats() {
#define ATTN_LIST_FORMAT(name, pausable, help) Format{#name, help, pausable, make_##name##_renderer},
  static const std::vector<Format> all{ATTN_FORMATS(ATTN_LIST_FORMAT)};
#undef ATTN_LIST_FORMAT
  return all;
}

const Format* find_format(const std::string& name) {
  const auto& all = formats();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Format& f) { return f.name == name; });
  return it == all.end() ? nullptr : &*it;
}

std::string join(const std::vector<Chunk>& chunks) {
  std::string all;
  for (const auto& c : chunks) all += c.text;
  return all;
}

std::string join(std::vector<Chunk>&& chunks) {
  if (chunks.size() == 1) return std::move(chunks.front().text);
  return join(static_cast<const std::vector<Chunk>&>(chunks));
}

}  // namespace attn
