#include "core/torch_random.hpp"

#include <cmath>
#include <stdexcept>

namespace attn {

DropoutRng parse_dropout_rng(const std::string& name) {
  if (name == "default") return DropoutRng::Default;
  if (name == "mkl") return DropoutRng::Mkl;
  throw std::invalid_argument("unknown dropout RNG '" + name + "' (expected default or mkl)");
}

std::string to_string(DropoutRng rng) { return rng == DropoutRng::Mkl ? "mkl" : "default"; }

void TorchGenerator::manual_seed(std::uint64_t seed) {
  seed_ = seed;
  engine_.seed(static_cast<std::uint32_t>(seed & 0xffffffffu));
}

std::uint32_t TorchGenerator::random() { return static_cast<std::uint32_t>(engine_()); }

std::uint64_t TorchGenerator::random64() {
  const std::uint64_t hi = random();
  const std::uint64_t lo = random();
  return (hi << 32) | lo;
}

float TorchGenerator::uniform(float from, float to) {
  // at::uniform_real_distribution<float>: 24 random bits scaled to [0, 1), then u * (to - from) + from
  // in float. PyTorch's CPU kernel runs that as one fused multiply-add (its AVX2 build contracts it),
  // so only fmaf reproduces every bit; with a separate multiply and add about a third of nn.Linear's
  // weights differ in the last bit. fmaf is exact on every machine, with or without an FMA unit.
  const float u = static_cast<float>(random() & 0xffffffu) * (1.0f / 16777216.0f);
  return std::fmaf(u, to - from, from);
}

Vector TorchGenerator::rand(std::size_t n) {
  Vector out = xt::empty<float>({n});  // (n,)
  for (auto& v : out) v = uniform(0.0f, 1.0f);
  return out;
}

Matrix TorchGenerator::rand(std::size_t rows, std::size_t cols) {
  Matrix out = xt::empty<float>({rows, cols});  // (rows, cols)
  for (auto& v : out) v = uniform(0.0f, 1.0f);
  return out;
}

std::vector<float> TorchGenerator::dropout_scale_mask(std::size_t count, double p, DropoutRng rng) {
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("dropout probability must be in [0, 1]");
  if (p == 0.0) return std::vector<float>(count, 1.0f);
  if (p == 1.0) return std::vector<float>(count, 0.0f);
  const double q = 1.0 - p;  // keep probability, as bernoulli_(1 - p) receives it
  // noise.div_(1 - p): the scalar becomes a float before the division.
  const float keep_value = 1.0f / static_cast<float>(q);
  std::vector<float> mask(count);
  if (rng == DropoutRng::Default) {
    // at::bernoulli_distribution<double>: a 53-bit double from random64() per element.
    for (auto& m : mask) {
      const double u = static_cast<double>(random64() & ((std::uint64_t{1} << 53) - 1)) *
                       (1.0 / 9007199254740992.0);
      m = u < q ? keep_value : 0.0f;
    }
  } else {
    // MKL's viRngBernoulli over a VSL_BRNG_MCG31 stream seeded by one engine draw:
    // x(k+1) = a * x(k) mod (2^31 - 1), u(k) = x(k) / (2^31 - 1), starting at u(0).
    constexpr std::uint64_t m31 = 2147483647u;
    constexpr std::uint64_t a = 1132489760u;
    std::uint64_t x = random() % m31;
    if (x == 0) x = 1;
    for (auto& m : mask) {
      const double u = static_cast<double>(x) / static_cast<double>(m31);
      m = u < q ? keep_value : 0.0f;
      x = (a * x) % m31;
    }
  }
  return mask;
}

}  // namespace attn
