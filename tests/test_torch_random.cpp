// TorchGenerator against PyTorch: the documented anchors, then torch.rand and nn.Linear init bit for
// bit for the seeds and shapes in tests/golden/rng.json (written by tests/golden/generate.py).
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/nn.hpp"
#include "core/torch_random.hpp"

using namespace attn;

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

template <class T>
std::vector<std::uint32_t> all_bits(const T& tensor) {
  std::vector<std::uint32_t> out;
  for (float v : tensor) out.push_back(bits_of(v));
  return out;
}

}  // namespace

TEST_CASE("manual_seed(123) gives PyTorch's first draw and torch.rand(3)", "[rng]") {
  TorchGenerator gen(123);
  CHECK(gen.random() == 2991312382u);
  gen.manual_seed(123);
  const Vector r = gen.rand(3);
  CHECK(r(0) == Approx(0.2961).margin(5e-5));
  CHECK(r(1) == Approx(0.5166).margin(5e-5));
  CHECK(r(2) == Approx(0.2517).margin(5e-5));
}

TEST_CASE("random64 puts the first draw in the high word", "[rng]") {
  TorchGenerator a(7), b(7);
  const std::uint64_t hi = a.random(), lo = a.random();
  CHECK(b.random64() == ((hi << 32) | lo));
}

TEST_CASE("manual_seed restarts the stream and keeps only the low 32 bits", "[rng]") {
  TorchGenerator gen(99);
  const std::uint32_t first = gen.random();
  gen.random();
  gen.manual_seed(99);
  CHECK(gen.random() == first);
  TorchGenerator wide((std::uint64_t{1} << 32) + 99);
  CHECK(wide.random() == first);
}

TEST_CASE("Mt19937 is std::mt19937's stream, a word at a time and in bulk across twists", "[rng]") {
  for (const std::uint32_t seed : {0u, 1u, 123u, 5489u, 4294967295u}) {
    INFO("seed " << seed);
    std::mt19937 reference(seed);
    Mt19937 engine(seed);
    // Words one at a time, then fills of lengths that start and end mid-twist, past several twists.
    std::vector<std::uint32_t> got, want;
    for (int i = 0; i < 700; ++i) got.push_back(engine.next());
    for (const std::size_t n : {1u, 623u, 624u, 625u, 5000u, 3u}) {
      std::vector<std::uint32_t> words(n);
      engine.fill(words.data(), n);
      got.insert(got.end(), words.begin(), words.end());
    }
    for (std::size_t i = 0; i < got.size(); ++i) want.push_back(static_cast<std::uint32_t>(reference()));
    CHECK(got == want);
  }
}

TEST_CASE("uniform over a buffer is uniform() element by element", "[rng]") {
  TorchGenerator bulk(42), one(42);
  std::vector<float> out(10000);
  bulk.uniform(out.data(), out.size(), -0.25f, 0.75f);
  std::size_t differ = 0;
  for (float v : out) differ += bits_of(v) != bits_of(one.uniform(-0.25f, 0.75f));
  CHECK(differ == 0);
  CHECK(bulk.random() == one.random());  // and both have drawn as many words
}

TEST_CASE("the bulk draws' AVX2 and FMA loops give the plain loops' bits", "[rng]") {
  // On a CPU without AVX2 and FMA both runs take the plain loops, and the check holds trivially; the
  // golden tests below check the bits against PyTorch's on whichever the CPU takes.
  const auto draws = [] {
    TorchGenerator gen(2024);
    std::vector<float> out(3 * 4096 + 37);
    gen.uniform(out.data(), out.size(), -0.125f, 0.5f);
    std::vector<float> normal(16 * 300 + 5);
    gen.normal(normal.data(), normal.size());
    out.insert(out.end(), normal.begin(), normal.end());
    return all_bits(out);
  };
  const std::vector<std::uint32_t> fast = draws();
  use_vector_paths(false);
  const std::vector<std::uint32_t> plain = draws();
  use_vector_paths(true);
  CHECK(fast == plain);
}

TEST_CASE("torch.rand and nn.Linear init match PyTorch bit for bit", "[rng][golden]") {
  std::ifstream in(ATTN_TESTS_DIR "/golden/rng.json");
  REQUIRE(in.good());
  const auto doc = nlohmann::json::parse(in);
  const auto& cases = doc.at("cases");
  REQUIRE(cases.size() >= 8);
  for (const auto& c : cases) {
    const std::uint64_t seed = std::stoull(c.at("seed").get<std::string>());
    INFO("seed " << seed);
    TorchGenerator gen(seed);
    CHECK(all_bits(gen.rand(3, 5)) == c.at("rand_3x5_bits").get<std::vector<std::uint32_t>>());
    CHECK(all_bits(gen.rand(4)) == c.at("rand_4_bits").get<std::vector<std::uint32_t>>());
    for (const auto& l : c.at("linears")) {
      INFO("nn.Linear(" << l.at("in") << ", " << l.at("out") << ", bias=" << l.at("bias") << ")");
      const Linear layer(l.at("in"), l.at("out"), l.at("bias"), gen);
      CHECK(layer.weight.shape(0) == l.at("out").get<std::size_t>());
      CHECK(all_bits(layer.weight) == l.at("weight_bits").get<std::vector<std::uint32_t>>());
      CHECK(all_bits(layer.bias) == l.at("bias_bits").get<std::vector<std::uint32_t>>());
    }
  }
}

namespace {

std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

}  // namespace

TEST_CASE("tensor.normal_ matches PyTorch bit for bit on both of its paths, and nn.Embedding's weights", "[rng][golden]") {
  std::ifstream in(ATTN_TESTS_DIR "/golden/rng.json");
  REQUIRE(in.good());
  const auto doc = nlohmann::json::parse(in);
  std::size_t checked = 0;
  for (const auto& c : doc.at("normal")) {
    const std::uint64_t seed = std::stoull(c.at("seed").get<std::string>());
    INFO("seed " << seed << ", sizes " << c.at("sizes").dump());
    TorchGenerator gen(seed);
    const auto sizes = c.at("sizes").get<std::vector<std::size_t>>();
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      CHECK(bits_of(gen.normal(sizes[k])) == c.at("bits")[k].get<std::vector<std::uint32_t>>());
      checked += sizes[k];
    }
    // The stream is left where PyTorch leaves it (a cached second value draws nothing).
    CHECK(all_bits(gen.rand(2)) == c.at("rand_after_bits").get<std::vector<std::uint32_t>>());
  }
  CHECK(checked > 5000);
  // torch.manual_seed(123); nn.Embedding(50257, 3): chapter 2's token embedding layer at the book's d_in.
  const auto& e = doc.at("embedding");
  TorchGenerator gen(std::stoull(e.at("seed").get<std::string>()));
  const std::vector<std::uint32_t> b = bits_of(gen.normal(e.at("rows").get<std::size_t>() * e.at("cols").get<std::size_t>()));
  REQUIRE(b.size() == 150771);
  CHECK(std::vector<std::uint32_t>(b.begin(), b.begin() + 48) == e.at("first_bits").get<std::vector<std::uint32_t>>());
  CHECK(std::vector<std::uint32_t>(b.end() - 48, b.end()) == e.at("last_bits").get<std::vector<std::uint32_t>>());
  std::uint64_t sum = 0;
  for (const std::uint32_t x : b) sum += x;
  CHECK(std::to_string(sum) == e.at("bits_sum_mod_2_64").get<std::string>());
}
