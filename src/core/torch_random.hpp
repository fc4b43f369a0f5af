#pragma once
// PyTorch's CPU random numbers, bit for bit (see docs/architecture.md, "Random numbers").
//
// torch.manual_seed(s) seeds a 32-bit Mersenne Twister; std::mt19937 is the same engine, so all that
// is written here are PyTorch's transforms of its draws: torch.rand / uniform_ (24-bit floats),
// nn.Linear's kaiming-uniform init, and the two ways PyTorch builds draw dropout keep-masks.
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// How a dropout keep-mask is drawn. PyTorch builds without MKL (Debian, Apple silicon; the book's
// outputs) use `Default`; the x86-64 Linux/Windows wheels use MKL's Bernoulli sampler.
enum class DropoutRng { Default, Mkl };

DropoutRng parse_dropout_rng(const std::string& name);  // "default" | "mkl"; throws std::invalid_argument
std::string to_string(DropoutRng rng);

// Whether the bulk draws (uniform_ and normal_ over a buffer) may use their AVX2 and FMA loops where the CPU
// has them (the default): off, they run the plain loops, for the tests that check both give the same bits.
void use_vector_paths(bool on);

// The 32-bit Mersenne Twister (MT19937), the engine of PyTorch's CPU generator: the same stream as
// std::mt19937 (tests/test_torch_random.cpp compares them), with a bulk draw. Written by hand because
// std::mt19937 hands out one word per call, through a branch, and a 163-million-parameter model draws one
// word per weight: filling a buffer whole, the twist of 624 words and their tempering run as plain loops
// the compiler vectorises. (SFMT and dSFMT, the fast relatives, are other generators: other numbers.)
class Mt19937 {
 public:
  explicit Mt19937(std::uint32_t seed = 5489u) { seed_with(seed); }
  void seed_with(std::uint32_t seed);
  std::uint32_t next() {
    if (index_ == kN) twist();
    return temper(state_[index_++]);
  }
  // next() `count` times, into out[0..count).
  void fill(std::uint32_t* out, std::size_t count);

  static constexpr std::size_t kN = 624;

 private:
  static std::uint32_t temper(std::uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }
  void twist();
  std::uint32_t state_[kN];
  std::size_t index_ = kN;
};

class TorchGenerator {
 public:
  explicit TorchGenerator(std::uint64_t seed = 67280421310721ULL) { manual_seed(seed); }

  // torch.manual_seed(seed): restarts the stream. Like PyTorch, only the low 32 bits seed the engine.
  void manual_seed(std::uint64_t seed);
  std::uint64_t initial_seed() const { return seed_; }

  std::uint32_t random();    // one engine draw
  std::uint64_t random64();  // two draws, the first as the high word

  // torch.rand(shape): row-major, one draw per element, 24-bit float in [0, 1).
  Vector rand(std::size_t n);                      // (n,)
  Matrix rand(std::size_t rows, std::size_t cols);  // (rows, cols)

  // tensor.uniform_(from, to) on float32: u * (to - from) + from in float arithmetic.
  float uniform(float from, float to);
  // The same over out[0..count), in order: nn.Linear's kaiming-uniform weights, torch.rand.
  void uniform(float* out, std::size_t count, float from, float to);

  // tensor.normal_() (mean 0, std 1) on a contiguous float32 tensor of `count` elements, as PyTorch 1.13's
  // CPU kernel draws it, so nn.Embedding's weights come out bit for bit:
  //   - 16 elements or more: every element a 24-bit uniform float first, then each block of 16 made normal
  //     by Box-Muller (elements j and j + 8 from one pair), with the float log, sin and cos of the AVX2 build
  //     (x86-64's default); a count that is not a multiple of 16 draws its last 16 uniforms again and
  //     transforms them once more;
  //   - fewer: one double Box-Muller pair per two elements, from 53-bit uniforms, the second of each pair
  //     kept for the next draw (until manual_seed), as at::normal_distribution<double> does.
  std::vector<float> normal(std::size_t count);
  // The same draws, handed to `emit(index, value)` as they are made instead of kept: an element the tail
  // redraws is emitted twice, the second value the final one. For nn.Embedding(50257, d), whose rows are
  // only wanted at a few token ids.
  void normal(std::size_t count, const std::function<void(std::size_t, float)>& emit);
  // The same into out[0..count): a model's embedding tables (tens of millions of draws) written in place.
  void normal(float* out, std::size_t count);

  // nn.Dropout(p)'s keep-mask drawn over `count` elements in row-major order, already scaled: each
  // entry is 1/(1-p) (kept) or 0 (dropped). p == 0 and p == 1 draw nothing, as in PyTorch.
  std::vector<float> dropout_scale_mask(std::size_t count, double p, DropoutRng rng);

 private:
  Mt19937 engine_;
  std::uint64_t seed_ = 0;
  std::optional<double> next_double_normal_;  // the cached second value of the last scalar Box-Muller pair
  template <class Emit>
  void normal_into(std::size_t count, const Emit& emit);
};

}  // namespace attn
