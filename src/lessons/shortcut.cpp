// attn shortcut — 4.4 Adding shortcut connections. ExampleDeepNeuralNetwork([3, 3, 3, 3, 3, 1]) without and
// with shortcuts: after loss.backward(), each layer's mean absolute weight gradient. Without shortcuts the
// gradients shrink on their way back to the first layer (they vanish); with them they stay large.
#include "lessons/chapter4.hpp"
#include "lessons/lessons.hpp"
#include "modules/gpt.hpp"

namespace attn {

static LessonInfo shortcut_info() { return LessonText::info("shortcut", "4.4"); }

namespace {

const std::vector<std::size_t> kLayerSizes{3, 3, 3, 3, 3, 1};

// torch.manual_seed(seed); model = ExampleDeepNeuralNetwork(layer_sizes, use_shortcut); print_gradients(model,
// sample_input): the forward, nn.MSELoss against [[0.]], and loss.backward().
ExampleDeepNeuralNetwork::Gradients gradients_of(std::uint64_t seed, bool use_shortcut, const Matrix& sample_input) {
  TorchGenerator gen(seed);
  const ExampleDeepNeuralNetwork model(kLayerSizes, use_shortcut, gen);
  return model.gradients(sample_input);
}

// One model's steps: its output, its loss, and each layer's mean absolute weight gradient as the Python float
// print_gradients prints (param.grad.abs().mean().item()).
void add_model_steps(const LessonText& text, Trace& t, const Node<Matrix>& sample_input, std::uint64_t seed,
                     bool use_shortcut) {
  const auto grads = t.lazy<ExampleDeepNeuralNetwork::Gradients>(gradients_of, seed, use_shortcut, sample_input);
  const std::string which = use_shortcut ? "with" : "without";
  const LessonText model = text.with({{"which", which}, {"use", use_shortcut ? "True" : "False"}});
  model.add({"output_{which}_shortcut", which}, {1, 1},
            [](const ExampleDeepNeuralNetwork::Gradients& g) { return g.output; }, grads);  // (1, 1)
  model.add({"loss_{which}_shortcut", which}, {},
            [](const ExampleDeepNeuralNetwork::Gradients& g) { return Scalar(g.loss); }, grads);  // ()
  for (std::size_t i = 0; i + 1 < kLayerSizes.size(); ++i)
    model.with({{"i", std::to_string(i)}})
        .add({"grad_mean_{which}_shortcut_{i}", which}, {},
             [](const ExampleDeepNeuralNetwork::Gradients& g, std::size_t i) {
               return PyFloat{static_cast<double>(g.grad_means[i])};
             },
             grads, i);
}

}  // namespace

ResolvedTrace run_shortcut(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  Trace t(shortcut_info(), in, sel);
  t.show_inputs = false;
  t.gpt_classes = true;  // and 4.4's ExampleDeepNeuralNetwork, which data/notebook/gpt.py defines too
  const std::uint64_t seed = cfg.seed.value_or(123);
  t.config["manual_seeds"] = {seed, seed};
  LessonText text(t, "shortcut");
  text.set("seed", seed);

  const Node<Matrix> sample_input = t.keep<Matrix>(Matrix{{1.0f, 0.0f, -1.0f}});  // (1, 3)
  text.add("sample_input", *sample_input);
  add_model_steps(text, t, sample_input, seed, /*use_shortcut=*/false);
  add_model_steps(text, t, sample_input, seed, /*use_shortcut=*/true);
  return t.resolve();
}

Lesson shortcut_lesson() {
  return {shortcut_info(),
          {chapter4_mode({{Opt::Seed, seed_help(option_help("shortcut", "seed"))}}, LessonConfig{}, run_shortcut)},
          // Its one size: the book's five layers of three.
          MemoryRuns{{{}}, {}}};
}

}  // namespace attn
