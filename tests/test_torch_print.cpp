// torch_str against PyTorch's own print(): tests/golden/print_cases.json holds str(tensor) for 757
// tensors (every rank 0-4, all number modes, non-finite values, -0.0, denormals, the largest float32,
// wrapping, summarisation, int64, and every step of the numeric-extreme golden configurations), written by
// tests/golden/gen_print_cases.py.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "render/torch_print.hpp"

using namespace attn;

namespace {

AnyTensor from_bits(const std::vector<std::size_t>& shape, const std::vector<std::uint32_t>& bits) {
  AnyTensor t = xt::empty<float>(shape);
  REQUIRE(t.size() == bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) std::memcpy(t.data() + i, &bits[i], sizeof(float));
  return t;
}

}  // namespace

TEST_CASE("torch_str prints exactly as PyTorch does", "[print][golden]") {
  std::ifstream in(ATTN_TESTS_DIR "/golden/print_cases.json");
  REQUIRE(in.good());
  const auto doc = nlohmann::json::parse(in);
  const auto& cases = doc.at("cases");
  REQUIRE(cases.size() >= 700);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const auto shape = c.at("shape").get<std::vector<std::size_t>>();
    INFO("case " << i << ", shape " << c.at("shape").dump());
    const AnyTensor t = from_bits(shape, c.at("data").get<std::vector<std::uint32_t>>());
    const bool integer = c.value("dtype", "float32") == "int64";  // torch.int64: no decimal point
    CHECK(torch_str(t, integer) == c.at("printed").get<std::string>());
  }
}

TEST_CASE("torch_str: the book's own forms", "[print]") {
  CHECK(torch_str(AnyTensor(Scalar(1.8524f))) == "tensor(1.8524)");
  CHECK(torch_str(AnyTensor(Vector{0.4419f, 0.6515f, 0.5683f})) == "tensor([0.4419, 0.6515, 0.5683])");
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(torch_str(AnyTensor(Matrix{{0.2899f, -inf}, {0.4656f, 0.1723f}})) ==
        "tensor([[0.2899,   -inf],\n        [0.4656, 0.1723]])");
  CHECK(torch_str(AnyTensor(Matrix{{2, 0}, {0, 2}})) == "tensor([[2., 0.],\n        [0., 2.]])");
  // What overflowing scores print as (docs/errors.md, "Numerics"), and -0.0, which is a zero to the format.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(torch_str(AnyTensor(Vector{nan, nan})) == "tensor([nan, nan])");
  CHECK(torch_str(AnyTensor(Vector{-nan, inf, -inf})) == "tensor([nan, inf, -inf])");
  CHECK(torch_str(AnyTensor(Vector{-0.0f, 0.0f})) == "tensor([-0., 0.])");
  CHECK(torch_str(AnyTensor(Vector{nan, inf, 1.5f, 1e-5f})) == "tensor([       nan,        inf, 1.5000e+00, 1.0000e-05])");
  CHECK(torch_str(AnyTensor(Tensor3{{{-0.4519f, 0.2216f}}, {{-0.5874f, 0.0058f}}})) ==
        "tensor([[[-0.4519,  0.2216]],\n\n        [[-0.5874,  0.0058]]])");
}
