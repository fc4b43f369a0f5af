#include "lessons/chapter4.hpp"

#include <cmath>

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

AnyTensor linspace(float start, float end, std::size_t steps) {
  AnyTensor out = AnyTensor::from_shape({steps});
  if (steps == 0) return out;
  if (steps == 1) {
    out(0) = start;
    return out;
  }
  // Written out because no library computes linspace in PyTorch's order: aten's RangeFactoriesKernel.cpp,
  // whose AVX2 build GCC compiles with -mfma, contracting each a * b + c into one fused multiply-add
  // (checked against PyTorch 1.13 under ATEN_CPU_CAPABILITY=default, avx2 and avx512: 8 lanes without FMA,
  // 8 and 16 with it, reproduce each of the three).
  const float step = (end - start) / static_cast<float>(steps - 1);
  const std::size_t halfway = steps / 2;
  const auto from_ends = [&](std::size_t idx) {  // the scalar form
    return idx < halfway ? std::fma(step, static_cast<float>(idx), start)
                         : std::fma(-step, static_cast<float>(steps - idx - 1), end);
  };
  constexpr std::size_t kLanes = 8;  // Vectorized<float>::size() under AVX2
  std::size_t idx = 0;
  // cpu_serial_kernel_vec runs its vector form two vectors at a time, then the scalar form on the rest.
  for (; idx + 2 * kLanes <= steps; idx += 2 * kLanes)
    for (std::size_t v = idx; v < idx + 2 * kLanes; v += kLanes) {
      const float base = from_ends(v);  // Vectorized<float>::arange(base, step): base + k * step, fused
      for (std::size_t k = 0; k < kLanes; ++k) out(v + k) = std::fma(static_cast<float>(k), step, base);
    }
  for (; idx < steps; ++idx) out(idx) = from_ends(idx);
  return out;
}

LessonMode chapter4_mode(std::vector<OptionUse> options, LessonConfig defaults, LessonMode::Run run) {
  LessonMode mode(std::move(options), defaults, std::move(run), /*uses_inputs=*/false);
  mode.takes_model = false;
  mode.no_model_reason = option_help("shared", "no_model_chapter4");
  return mode;
}

}  // namespace attn
