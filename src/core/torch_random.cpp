#include "core/torch_random.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace attn {

DropoutRng parse_dropout_rng(const std::string& name) {
  if (name == "default") return DropoutRng::Default;
  if (name == "mkl") return DropoutRng::Mkl;
  throw std::invalid_argument("unknown dropout RNG '" + name + "' (expected default or mkl)");
}

std::string to_string(DropoutRng rng) { return rng == DropoutRng::Mkl ? "mkl" : "default"; }

void Mt19937::seed_with(std::uint32_t seed) {
  state_[0] = seed;
  for (std::size_t i = 1; i < kN; ++i)
    state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
  index_ = kN;
}

void Mt19937::twist() {
  constexpr std::size_t kM = 397;
  constexpr std::uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu, kMatrix = 0x9908b0dfu;
  const auto mixed = [](std::uint32_t upper, std::uint32_t lower, std::uint32_t far) {
    const std::uint32_t y = (upper & kUpper) | (lower & kLower);
    return far ^ (y >> 1) ^ ((y & 1u) ? kMatrix : 0u);
  };
  // In three runs, as the reference implementation does, so that each loop reads only words it has not yet
  // written (the first two) or written in an earlier run: each is a plain loop.
  std::size_t i = 0;
  for (; i < kN - kM; ++i) state_[i] = mixed(state_[i], state_[i + 1], state_[i + kM]);
  for (; i < kN - 1; ++i) state_[i] = mixed(state_[i], state_[i + 1], state_[i + kM - kN]);
  state_[kN - 1] = mixed(state_[kN - 1], state_[0], state_[kM - 1]);
  index_ = 0;
}

void Mt19937::fill(std::uint32_t* out, std::size_t count) {
  std::size_t done = 0;
  while (done < count) {
    if (index_ == kN) twist();
    const std::size_t take = std::min(count - done, kN - index_);
    for (std::size_t k = 0; k < take; ++k) out[done + k] = temper(state_[index_ + k]);
    index_ += take;
    done += take;
  }
}

void TorchGenerator::manual_seed(std::uint64_t seed) {
  seed_ = seed;
  engine_.seed_with(static_cast<std::uint32_t>(seed & 0xffffffffu));
  next_double_normal_.reset();  // as CPUGeneratorImpl::set_current_seed
}

std::uint32_t TorchGenerator::random() { return engine_.next(); }

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

namespace {

// The bulk loops below are compiled twice, for CPUs with AVX2 and FMA and for the others, and one is chosen
// when first called: with them, each std::fmaf is one instruction instead of a call into libm, and the
// lanes' loop of normal_fill_16 runs as 8-float vectors. Both give the same bits (a fused multiply-add is
// exact either way, the rest is elementwise float arithmetic); only the speed differs.
#if defined(__x86_64__) && defined(__GNUC__)
#define ATTN_INLINE __attribute__((always_inline)) inline
#define ATTN_AVX2_FMA __attribute__((target("avx2,fma")))
bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#else
#define ATTN_INLINE inline
#define ATTN_AVX2_FMA
bool cpu_has_avx2_fma() { return false; }
#endif
std::atomic<bool> vector_paths{true};  // use_vector_paths(false): the plain loops even where AVX2 and FMA are
bool has_avx2_fma() { return vector_paths.load(std::memory_order_relaxed) && cpu_has_avx2_fma(); }

// 24 random bits scaled to [0, 1), then u * (to - from) + from, fused: uniform()'s arithmetic, word by word.
ATTN_INLINE void words_to_uniform_body(const std::uint32_t* words, float* out, std::size_t count, float from, float to) {
  const float range = to - from;
  for (std::size_t i = 0; i < count; ++i)
    out[i] = std::fmaf(static_cast<float>(words[i] & 0xffffffu) * (1.0f / 16777216.0f), range, from);
}
ATTN_AVX2_FMA void words_to_uniform_fma(const std::uint32_t* words, float* out, std::size_t count, float from, float to) {
  words_to_uniform_body(words, out, count, from, to);
}
void words_to_uniform_plain(const std::uint32_t* words, float* out, std::size_t count, float from, float to) {
  words_to_uniform_body(words, out, count, from, to);
}
void words_to_uniform(const std::uint32_t* words, float* out, std::size_t count, float from, float to) {
  if (has_avx2_fma()) words_to_uniform_fma(words, out, count, from, to);
  else words_to_uniform_plain(words, out, count, from, to);
}

// The float log and sincos of PyTorch's AVX2 normal_ (avx_mathfun's cephes polynomials), one lane at a time.
// Written by hand because no library gives these exact bits: they are particular polynomials evaluated in a
// particular order, and GCC contracted some of their multiply-adds into FMAs when it compiled PyTorch (every
// polynomial step, and in each tail the product computed first). std::fmaf stands exactly where an FMA was
// found to run: tests/golden/rng.json holds PyTorch's normal_ output to check every bit.
ATTN_INLINE float bits_to_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

ATTN_INLINE std::uint32_t float_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

ATTN_INLINE std::uint32_t mask_of(bool b) { return 0u - static_cast<std::uint32_t>(b); }  // all ones where b

ATTN_INLINE float avx2_log(float x) {  // x in (0, 1] here: 1 - u for a uniform u
  // Selects below are masks, as the AVX code's are, so that the lanes' loop has no branch and vectorises.
  const std::uint32_t smallest = 0x00800000u;  // denormals cut off: max(x, the smallest normal float)
  const std::uint32_t below = mask_of(x < bits_to_float(smallest));
  std::uint32_t bits = (float_bits(x) & ~below) | (smallest & below);
  const int exponent = static_cast<int>(bits >> 23) - 0x7f;
  x = bits_to_float((bits & ~0x7f800000u) | 0x3f000000u);  // the mantissa, in [0.5, 1)
  float e = static_cast<float>(exponent) + 1.0f;
  const bool small = x < 0.707106781186547524f;
  const float tmp = bits_to_float(float_bits(x) & mask_of(small));
  x = x - 1.0f;
  e = e - bits_to_float(float_bits(1.0f) & mask_of(small));
  x = x + tmp;
  const float z = x * x;
  float y = 7.0376836292E-2f;  // the polynomial written out, not looped over a list: the lanes' loop vectorises
  y = std::fmaf(y, x, -1.1514610310E-1f);
  y = std::fmaf(y, x, 1.1676998740E-1f);
  y = std::fmaf(y, x, -1.2420140846E-1f);
  y = std::fmaf(y, x, 1.4249322787E-1f);
  y = std::fmaf(y, x, -1.6668057665E-1f);
  y = std::fmaf(y, x, 2.0000714765E-1f);
  y = std::fmaf(y, x, -2.4999993993E-1f);
  y = std::fmaf(y, x, 3.3333331174E-1f);
  y = y * x;
  y = std::fmaf(y, z, e * -2.12194440e-4f);  // y * z + e * q1: the product y * z fused
  y = y - z * 0.5f;
  x = x + y;
  return x + e * 0.693359375f;
}

ATTN_INLINE void avx2_sincos(float x, float& s, float& c) {  // x >= 0 here: 2 pi u
  const bool negative = std::signbit(x);
  x = std::fabs(x);
  int j = static_cast<int>(x * 1.27323954473516f);  // 4 / pi, truncated
  j = (j + 1) & ~1;
  const float y = static_cast<float>(j);
  const bool swap_sin = (j & 4) != 0, sine_poly_for_sin = (j & 2) == 0;
  x = x + y * -0.78515625f;  // extended precision x - y * pi/4
  x = x + y * -2.4187564849853515625e-4f;
  x = x + y * -3.77489497744594108e-8f;
  const bool cos_negative = ((~(j - 2)) & 4) != 0;
  const float z = x * x;
  float cos_poly = std::fmaf(std::fmaf(2.443315711809948E-005f, z, -1.388731625493765E-003f), z, 4.166664568298827E-002f);
  cos_poly = cos_poly * z;
  cos_poly = std::fmaf(cos_poly, z, -(z * 0.5f));  // y * z - z * 0.5: the product y * z fused
  cos_poly = cos_poly + 1.0f;
  float sin_poly = std::fmaf(std::fmaf(-1.9515295891E-4f, z, 8.3321608736E-3f), z, -1.6666654611E-1f);
  sin_poly = sin_poly * z;
  sin_poly = std::fmaf(sin_poly, x, x);
  // The lanes' select, as the AVX code does it: a masked copy of each, added (so -0.0 becomes 0.0 the same way).
  const float sin_part = bits_to_float(float_bits(sin_poly) & mask_of(sine_poly_for_sin));
  const float cos_part = bits_to_float(float_bits(cos_poly) & ~mask_of(sine_poly_for_sin));
  const float sin_rest = sin_poly - sin_part, cos_rest = cos_poly - cos_part;
  s = cos_part + sin_part;
  c = cos_rest + sin_rest;
  // The AVX code flips the sign bits with an xor; so does this, with no branch (the lanes' loop vectorises).
  s = bits_to_float(float_bits(s) ^ (static_cast<std::uint32_t>(negative != swap_sin) << 31));
  c = bits_to_float(float_bits(c) ^ (static_cast<std::uint32_t>(cos_negative) << 31));
}

// normal_fill_16 of the AVX2 build: data[j] and data[j + 8] (uniforms) become a Box-Muller pair.
ATTN_INLINE void normal_fill_16(float* data) {
  const float two_pi = static_cast<float>(2.0 * 3.14159265358979323846);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j], u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * avx2_log(u1));
    float s, c;
    avx2_sincos(two_pi * u2, s, c);
    data[j] = std::fmaf(radius * c, 1.0f, 0.0f);  // _mm256_fmadd_ps(n, std, mean) with std 1, mean 0
    data[j + 8] = std::fmaf(radius * s, 1.0f, 0.0f);
  }
}

// normal_fill_16 on each of `blocks` blocks of 16 in turn.
ATTN_AVX2_FMA void normal_fill_blocks_fma(float* data, std::size_t blocks) {
  for (std::size_t b = 0; b < blocks; ++b) normal_fill_16(data + 16 * b);
}
void normal_fill_blocks_plain(float* data, std::size_t blocks) {
  for (std::size_t b = 0; b < blocks; ++b) normal_fill_16(data + 16 * b);
}
void normal_fill_blocks(float* data, std::size_t blocks) {
  if (has_avx2_fma()) normal_fill_blocks_fma(data, blocks);
  else normal_fill_blocks_plain(data, blocks);
}

}  // namespace

void use_vector_paths(bool on) { vector_paths = on; }

void TorchGenerator::uniform(float* out, std::size_t count, float from, float to) {
  std::uint32_t words[4096];
  for (std::size_t done = 0; done < count;) {
    const std::size_t take = std::min(count - done, sizeof words / sizeof words[0]);
    engine_.fill(words, take);
    words_to_uniform(words, out + done, take, from, to);
    done += take;
  }
}

template <class Emit>
void TorchGenerator::normal_into(std::size_t count, const Emit& emit) {
  if (count >= 16) {
    // PyTorch draws all `count` uniforms first, then transforms each block of 16; a block's values depend
    // only on its own uniforms, so drawing and transforming block by block gives the same numbers.
    // Block by block, 256 blocks at a time.
    float chunk[16 * 256];
    const std::size_t whole = count / 16 * 16;
    for (std::size_t i = 0; i < whole;) {
      const std::size_t take = std::min(whole - i, sizeof chunk / sizeof chunk[0]);
      uniform(chunk, take, 0.0f, 1.0f);
      normal_fill_blocks(chunk, take / 16);
      for (std::size_t k = 0; k < take; ++k) emit(i + k, chunk[k]);
      i += take;
    }
    if (whole == count) return;
    float block[16];
    for (std::size_t i = whole; i < count; ++i) (void)uniform(0.0f, 1.0f);  // drawn, then overwritten below
    for (float& u : block) u = uniform(0.0f, 1.0f);  // the last 16 again, from new uniforms
    normal_fill_16(block);
    for (std::size_t k = 0; k < 16; ++k) emit(count - 16 + k, block[k]);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (next_double_normal_) {
      emit(i, static_cast<float>(*next_double_normal_));
      next_double_normal_.reset();
      continue;
    }
    // uniform_real_distribution<double>: 53 random bits of one 64-bit draw.
    const auto uniform53 = [this] { return static_cast<double>(random64() & ((std::uint64_t{1} << 53) - 1)) * 0x1p-53; };
    const double u1 = uniform53(), u2 = uniform53();
    const double r = std::sqrt(-2.0 * std::log1p(-u2));
    const double theta = 2.0 * 3.14159265358979323846 * u1;
    next_double_normal_ = r * std::sin(theta);
    emit(i, static_cast<float>(r * std::cos(theta)));
  }
}

std::vector<float> TorchGenerator::normal(std::size_t count) {
  std::vector<float> out(count);
  normal(out.data(), count);
  return out;
}

void TorchGenerator::normal(float* out, std::size_t count) {
  normal_into(count, [out](std::size_t i, float v) { out[i] = v; });
}

void TorchGenerator::normal(std::size_t count, const std::function<void(std::size_t, float)>& emit) {
  normal_into(count, emit);
}

Vector TorchGenerator::rand(std::size_t n) {
  Vector out = xt::empty<float>({n});  // (n,)
  uniform(out.data(), out.size(), 0.0f, 1.0f);
  return out;
}

Matrix TorchGenerator::rand(std::size_t rows, std::size_t cols) {
  Matrix out = xt::empty<float>({rows, cols});  // (rows, cols)
  uniform(out.data(), out.size(), 0.0f, 1.0f);
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
