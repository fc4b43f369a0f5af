// attn layer-norm — 4.2 Normalizing activations with layer normalization. A layer's outputs are shifted to
// mean 0 and scaled to variance 1 across each row's features: first by hand on nn.Sequential(nn.Linear(5, 6),
// nn.ReLU())'s outputs, then as the book's LayerNorm class (biased variance, eps, scale and shift).
#include "lessons/chapter4.hpp"
#include "lessons/lessons.hpp"
#include "modules/gpt.hpp"

namespace attn {

static LessonInfo layer_norm_info() { return LessonText::info("layer-norm", "4.2"); }

namespace {

// torch.manual_seed(seed); batch_example = torch.randn(2, 5); layer = nn.Sequential(nn.Linear(5, 6), nn.ReLU()):
// the example and the layer, drawn in that order from one generator.
struct Example {
  AnyTensor batch_example;  // (2, 5)
  Linear layer;             // (6, 5), with a bias
};

Example make_example(std::uint64_t seed) {
  TorchGenerator gen(seed);
  AnyTensor batch_example = randn(gen, {2, 5});  // (2, 5)
  Linear layer(5, 6, /*bias=*/true, gen);
  return {std::move(batch_example), std::move(layer)};
}

}  // namespace

ResolvedTrace run_layer_norm(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  Trace t(layer_norm_info(), in, sel);
  t.show_inputs = false;
  t.gpt_classes = true;
  const std::uint64_t seed = cfg.seed.value_or(123);
  t.config["manual_seeds"] = {seed};
  LessonText text(t, "layer-norm");
  text.set("seed", seed);

  const Node<Example> example = t.lazy<Example>(make_example, seed);
  text.add("batch_example", {2, 5}, [](const Example& e) { return e.batch_example; }, example);

  const auto out = t.lazy<AnyTensor>([](const Example& e) { return relu(linear(e.layer, e.batch_example)); },
                                     example);  // (2, 6)
  text.add("out", {2, 6}, out);
  const auto mean = t.lazy<AnyTensor>(mean_last, out);  // (2, 1)
  const auto var = t.lazy<AnyTensor>([](const AnyTensor& x) { return var_last(x, /*unbiased=*/true); }, out);  // (2, 1)
  text.add("mean", {2, 1}, mean);
  text.add("var", {2, 1}, var);

  // (out - mean) / torch.sqrt(var), elementwise in float32 as PyTorch broadcasts it.
  const auto out_norm = t.lazy<AnyTensor>([](const AnyTensor& out, const AnyTensor& mean, const AnyTensor& var) {
    return AnyTensor((out - mean) / xt::sqrt(var));
  }, out, mean, var);  // (2, 6)
  text.add("out_norm", {2, 6}, out_norm);
  text.add("out_norm_mean", {2, 1}, mean_last, out_norm);
  text.add("out_norm_var", {2, 1}, [](const AnyTensor& x) { return var_last(x, /*unbiased=*/true); }, out_norm);

  // ln = LayerNorm(emb_dim=5); out_ln = ln(batch_example): the class does the same with the biased variance,
  // eps under the root, and a scale of ones and a shift of zeros that training would learn.
  const auto out_ln = t.lazy<AnyTensor>([](const Example& e) { return LayerNorm(5).forward(e.batch_example); },
                                        example);  // (2, 5)
  text.add("out_ln", {2, 5}, out_ln);
  text.add("out_ln_mean", {2, 1}, mean_last, out_ln);
  text.add("out_ln_var", {2, 1}, [](const AnyTensor& x) { return var_last(x, /*unbiased=*/false); }, out_ln);
  return t.resolve();
}

Lesson layer_norm_lesson() {
  return {layer_norm_info(),
          {chapter4_mode({{Opt::Seed, seed_help(option_help("layer-norm", "seed"))}}, LessonConfig{}, run_layer_norm)},
          // Its one size: the book's (2, 5) example.
          MemoryRuns{{{}}, {}}};
}

}  // namespace attn
