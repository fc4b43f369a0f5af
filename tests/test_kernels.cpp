// The fast kernels against the simple reference, on small and odd shapes (llm.c's rule: check, then
// time). Timing itself stays out of the tests: `attn bench` measures.
#include <catch2/catch.hpp>

#include <cmath>
#include <algorithm>
#include <vector>

#include <xtensor/xmath.hpp>

#include "core/attention.hpp"
#include "core/kernels.hpp"
#include "lessons/lessons.hpp"
#include "support.hpp"

#include <nlohmann/json.hpp>

using namespace attn;

namespace {

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Q, K and V packed in one (B, T, heads*hd + 2*kv*hd) buffer, as a fused projection lays them out.
struct Packed {
  Packed(const AttentionShape& s, std::uint64_t seed) : shape(s) {
    q_width = s.heads * s.head_dim;
    kv_width = s.kv_heads * s.head_dim;
    ld = q_width + 2 * kv_width;
    TorchGenerator gen(seed);
    data.resize(s.batch * s.tokens * ld);
    for (auto& v : data) v = gen.uniform(-2.0f, 2.0f);
  }
  std::vector<float> run(bool fused, unsigned threads = 2) const {
    std::vector<float> out(shape.batch * shape.tokens * q_width, -1.0f);
    const AttentionIO io{data.data(), ld, data.data() + q_width, ld, data.data() + q_width + kv_width, ld,
                         out.data(), q_width};
    if (fused)
      causal_attention_fused(shape, io, threads);
    else
      causal_attention_reference(shape, io);
    return out;
  }
  std::vector<float> run_unfused() const {
    std::vector<float> out(shape.batch * shape.tokens * q_width, -1.0f);
    causal_attention_unfused(shape, {data.data(), ld, data.data() + q_width, ld, data.data() + q_width + kv_width, ld,
                                     out.data(), q_width},
                             2);
    return out;
  }
  AttentionShape shape;
  std::size_t q_width, kv_width, ld;
  std::vector<float> data;
};

}  // namespace

TEST_CASE("fused and unfused kernels match the reference on small and odd shapes", "[kernels]") {
  const std::vector<AttentionShape> shapes{
      {1, 1, 1, 1, 1},    // one token, head_dim 1
      {1, 7, 2, 2, 3},    // fewer tokens than a tile
      {2, 77, 3, 1, 5},   // multi-query, odd sizes
      {1, 129, 1, 1, 1},  // one past a tile, head_dim 1
      {1, 130, 4, 2, 8},  // grouped query
      {3, 128, 2, 2, 16},  // exactly one tile, batch 3
      {1, 257, 2, 2, 64},  // two tiles and one row
      {1, 600, 2, 1, 4},   // query tiles that reach across several key tiles, the last one partly masked
  };
  for (const auto& s : shapes) {
    INFO("B=" << s.batch << " T=" << s.tokens << " heads=" << s.heads << " kv=" << s.kv_heads << " hd=" << s.head_dim);
    const Packed p(s, 1000 + s.tokens);
    const std::vector<float> ref = p.run(false);
    CHECK(max_abs_diff(p.run(true), ref) <= 1e-5f);
    CHECK(max_abs_diff(p.run_unfused(), ref) <= 1e-5f);
    // The output does not depend on how tasks fall on threads.
    CHECK(p.run(true, 1) == p.run(true, 2));
    // Every output was written (the buffer started at -1 everywhere; outputs are averages of values in [-2, 2]).
    CHECK(std::none_of(ref.begin(), ref.end(), [](float v) { return std::isnan(v); }));
  }
}

TEST_CASE("the softmax max and exp of every build the CPU can run give the scalar bits", "[kernels]") {
  std::vector<VectorIsa> isas{VectorIsa::Scalar};
  if (best_vector_isa() != VectorIsa::Scalar) isas.push_back(VectorIsa::Avx2);
  if (best_vector_isa() == VectorIsa::Avx512) isas.push_back(VectorIsa::Avx512);
  TorchGenerator gen(5);
  for (const std::size_t n : {1, 7, 8, 9, 15, 16, 17, 33, 256}) {
    std::vector<float> in(n);
    for (auto& v : in) v = gen.uniform(-40.0f, 8.0f);
    in[n / 2] = 8.0f;  // the row maximum, as the kernel passes it: exp(0) = 1 appears once
    double expected_sum = 0.0;
    for (float v : in) expected_sum += torch_exp(v - 8.0f);
    for (const VectorIsa isa : isas) {
      INFO("n=" << n << " isa=" << static_cast<int>(isa));
      CHECK(max_with(isa, in.data(), n, -100.0f) == 8.0f);  // the maximum, wherever it stands
      CHECK(max_with(isa, in.data(), n, 9.5f) == 9.5f);     // a running maximum already larger stays
      const auto before = static_cast<std::ptrdiff_t>(n / 2);  // the part before the 8.0 (none for n = 1)
      CHECK(max_with(isa, in.data(), n / 2, -100.0f) ==
            (before > 0 ? *std::max_element(in.begin(), in.begin() + before) : -100.0f));
      std::vector<float> x = in;
      const float sum = exp_shift_sum_with(isa, x.data(), n, 8.0f);
      for (std::size_t i = 0; i < n; ++i) REQUIRE(x[i] == torch_exp(in[i] - 8.0f));
      CHECK(std::fabs(sum - expected_sum) <= 1e-6 * expected_sum);
    }
  }
}

TEST_CASE("the first query attends only to the first key", "[kernels]") {
  const AttentionShape s{1, 200, 1, 1, 4};
  const Packed p(s, 5);
  const std::vector<float> out = p.run(true);
  for (std::size_t d = 0; d < 4; ++d) CHECK(out[d] == Approx(p.data[p.q_width + p.kv_width + d]).margin(1e-6));
}

TEST_CASE("modules' fast forward paths equal their step-by-step passes", "[kernels][modules]") {
  const Inputs in = load_embeddings(default_embeddings_path());
  TorchGenerator rnd(0);
  const Tensor3 book = make_batch(in.embeddings, 2);  // (2, 6, 3)
  Tensor3 wide = xt::empty<float>({2, 150, 12});       // (2, 150, 12): more than one tile
  for (auto& v : wide) v = rnd.uniform(-1.0f, 1.0f);
  for (const Tensor3* x : std::vector<const Tensor3*>{&book, &wide}) {
    const std::size_t d_in = x->shape(2);
    TorchGenerator gen(123);
    const MultiHeadAttention mha(d_in, 8, 0.0, 4, true, gen);
    const GroupedQueryAttention gqa(d_in, 8, 0.0, 4, 2, false, gen);
    const Tensor3 mha_steps = mha.attend(*x, gen, DropoutRng::Default).context_vecs;
    CHECK(xt::amax(xt::abs(mha.forward(*x, gen, DropoutRng::Default) - mha_steps))() <= 1e-5f);
    CHECK(xt::amax(xt::abs(mha.forward_fused(*x) - mha_steps))() <= 1e-5f);
    const Tensor3 gqa_steps = gqa.attend(*x, gen, DropoutRng::Default).context_vecs;
    CHECK(xt::amax(xt::abs(gqa.forward(*x, gen, DropoutRng::Default) - gqa_steps))() <= 1e-5f);
  }
}

TEST_CASE("attn bench runs every implementation on the same function (tiny shape, no timing asserted)",
          "[kernels][bench]") {
  const auto r = attn_test::run({"bench", "--batch", "1", "--tokens", "520", "--dim", "64", "--heads", "4",
                                 "--kv-groups", "2", "--repeats", "1", "--json"});
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["results"].size() == 4);
  std::vector<std::string> names;
  for (const auto& row : doc["results"]) {
    names.push_back(row["impl"]);
    CHECK(row["max_abs_diff"].get<double>() <= 1e-4);
    CHECK(row["median_s"].get<double>() > 0.0);
    CHECK(row["times_s"].size() == 1);
  }
  CHECK(names == std::vector<std::string>{"wrapper", "mha", "fused", "gqa"});
  // mha holds the whole (1, 4, 520, 520) score tensor (4.1 MB); fused only tiles, per thread.
  CHECK(doc["results"][1]["peak_mb"].get<double>() > 4.0 * 520 * 520 * 4 / (1024.0 * 1024.0));
  CHECK(doc["results"][2]["peak_mb"].get<double>() < doc["results"][1]["peak_mb"].get<double>() / 2);
  CHECK(attn_test::run({"bench", "--dim", "100", "--heads", "12"}).status == 2);
  CHECK(attn_test::run({"bench", "--impl", "cuda"}).status == 2);
}
