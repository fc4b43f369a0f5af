// attn gelu — 4.3 Implementing a feed forward network with GELU activations. GPT-2's activation, GELU in its
// tanh approximation, against ReLU on the book's torch.linspace(-3, 3, 100): smooth, and not quite zero for
// negative inputs.
#include "lessons/chapter4.hpp"
#include "lessons/lessons.hpp"
#include "modules/gpt.hpp"

namespace attn {

static LessonInfo gelu_info() { return LessonText::info("gelu", "4.3"); }

ResolvedTrace run_gelu(const Inputs& in, const LessonConfig&, const Selection& sel) {
  Trace t(gelu_info(), in, sel);
  t.show_inputs = false;
  t.gpt_classes = true;
  LessonText text(t, "gelu");
  t.notes.push_back(text.phrase("note_linspace"));

  // gelu, relu = GELU(), nn.ReLU(); x = torch.linspace(-3, 3, 100)
  const auto x = t.lazy<AnyTensor>([] { return linspace(-3.0f, 3.0f, 100); });  // (100,)
  text.add("x", {100}, x);
  text.add("y_gelu", {100}, [](const AnyTensor& x) { return gelu(x); }, x);  // (100,)
  text.add("y_relu", {100}, [](const AnyTensor& x) { return relu(x); }, x);  // (100,)
  return t.resolve();
}

Lesson gelu_lesson() {
  return {gelu_info(), {chapter4_mode({}, LessonConfig{}, run_gelu)},
          // Its one size: the book's 100 points.
          MemoryRuns{{{}}, {}}};
}

}  // namespace attn
