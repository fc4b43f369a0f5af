#include "lessons/chapter4.hpp"

#include "lessons/helpers.hpp"

namespace attn {

AnyTensor randn(TorchGenerator& gen, const std::vector<std::size_t>& shape) {
  AnyTensor out = AnyTensor::from_shape(shape);
  gen.normal(out.data(), out.size());
  return out;
}

AnyTensor rand(TorchGenerator& gen, const std::vector<std::size_t>& shape) {
  AnyTensor out = AnyTensor::from_shape(shape);
  for (float& v : out) v = gen.uniform(0.0f, 1.0f);
  return out;
}

LessonMode chapter4_mode(std::vector<OptionUse> options, LessonConfig defaults, LessonMode::Run run) {
  LessonMode mode(std::move(options), defaults, std::move(run), /*uses_inputs=*/false);
  mode.takes_model = false;
  mode.no_model_reason = option_help("shared", "no_model_chapter4");
  return mode;
}

}  // namespace attn
