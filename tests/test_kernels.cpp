// The fast kernels against the simple reference, on small and odd shapes (llm.c's rule: check, then
// time). Timing itself stays out of the tests: `attn bench` measures.
#include <catch2/catch.hpp>

#include <sched.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <xtensor/xmath.hpp>

#include "inputs/embeddings.hpp"
#include "modules/attention.hpp"
#include "bench/impls.hpp"
#include "bench/spread.hpp"
#include "kernels/fast.hpp"
#include "kernels/kernels.hpp"
#include "cli/bench_options.hpp"
#include "lessons/lessons.hpp"
#include "support.hpp"

#include <nlohmann/json.hpp>

using namespace attn;

namespace {

// How far a fast path is from its reference, in a way that holds on every CPU. The fast paths add their
// products in an order that depends on the vector build (ours: AVX-512, AVX2, portable; oneDNN's and
// OpenBLAS's: whatever the CPU runs), so their last bits differ from the reference's by an amount that
// scales with the magnitude of the terms, not of the result: where 1e30-sized terms cancel to 1e26, an
// AVX2 machine's result differs from the reference by 7e-5 relatively, which no per-element tolerance
// that still means something allows. So, as llama.cpp's test-backend-ops does, a tensor is compared by
// its normalised mean squared error, sum((got - want)^2) / sum(want^2), over the positions where both are
// finite; and NaN must stand exactly where NaN stands, an infinity where the same infinity stands. (Per
// row it would not do: a row of one value near zero, an average of values in [-2, 2], has a relative
// error as large as any per-element one.)
struct Comparison {
  std::size_t misplaced = 0;  // positions where NaN, +inf or -inf of one side is not the other's
  double nmse = 0.0;
};
Comparison compare(const float* got, const float* want, std::size_t n) {
  Comparison c;
  double err = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(want[i])) {
      const bool same = std::isnan(got[i]) || std::isnan(want[i]) ? std::isnan(got[i]) && std::isnan(want[i])
                                                                  : got[i] == want[i];
      if (!same && c.misplaced < 8) WARN("at " << i << ": " << got[i] << " vs " << want[i]);
      c.misplaced += same ? 0 : 1;
      continue;
    }
    const double d = static_cast<double>(got[i]) - want[i];
    err += d * d;
    norm += static_cast<double>(want[i]) * want[i];
  }
  c.nmse = err == 0.0 ? 0.0 : err / norm;  // all zeros must be all zeros: 1/0 is inf, over any bound
  return c;
}
// The bound on the NMSE. Measured (AMD EPYC with AVX-512, 2026-11-25) over every build the tests reach:
// our three, oneDNN capped at AVX2, SSE4.1 and AVX-512 (ONEDNN_MAX_CPU_ISA), OpenBLAS's Haswell and
// SkylakeX kernels, each pair: at most 2.7e-12 on any tensor here, the overflowing ones included (float32
// rounds each operation by up to 6e-8; squared, and averaged over a tensor). llama.cpp's test-backend-ops
// allows 1e-7 by default; 1e-9 keeps a margin of over 300 above the worst measured, and stays far below
// what a wrong result gives (a key missed or a mask shifted moves whole rows: 1e-3 or more).
constexpr double kMaxNmse = 1e-9;

// The check: every non-finite value in its place, and the finite ones within the bound.
void near(const float* got, const float* want, std::size_t n) {
  const Comparison c = compare(got, want, n);
  INFO("misplaced non-finite values: " << c.misplaced << ", NMSE: " << c.nmse);
  CHECK(c.misplaced == 0);
  CHECK(c.nmse <= kMaxNmse);
}
void near(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  near(got.data(), want.data(), got.size());
}
void near(const Tensor3& got, const Tensor3& want) {
  REQUIRE(got.shape() == want.shape());
  near(got.data(), want.data(), got.size());
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
  // The fused kernel in one build.
  std::vector<float> run_with(VectorIsa isa, unsigned threads = 2) const {
    std::vector<float> out(shape.batch * shape.tokens * q_width, -1.0f);
    causal_attention_fused_with(isa, shape,
                                {data.data(), ld, data.data() + q_width, ld, data.data() + q_width + kv_width, ld,
                                 out.data(), q_width},
                                threads);
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

// Every build of the fast kernels this CPU can run: the portable one always, AVX2 and AVX-512 where the
// CPU has them (CI's machine has AVX-512, so all three run there).
std::vector<VectorIsa> runnable_isas() {
  std::vector<VectorIsa> isas{VectorIsa::Scalar};
  if (best_vector_isa() != VectorIsa::Scalar) isas.push_back(VectorIsa::Avx2);
  if (best_vector_isa() == VectorIsa::Avx512) isas.push_back(VectorIsa::Avx512);
  return isas;
}

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
    near(p.run(true), ref);
    near(p.run_unfused(), ref);
    for (const VectorIsa isa : runnable_isas()) {
      INFO("build " << isa_info(isa).name);
      near(p.run_with(isa), ref);
      CHECK(p.run_with(isa, 1) == p.run_with(isa, 2));
    }
    // The output does not depend on how tasks fall on threads: bit for bit the same at every thread count,
    // from one to more threads than (batch, head, query tile) tasks or CPUs.
    const std::vector<float> one = p.run(true, 1);
    for (const unsigned threads : {2u, 3u, 4u, 5u, 8u, 16u, 33u}) {
      INFO("threads " << threads);
      CHECK(p.run(true, threads) == one);
    }
    // Every output was written (the buffer started at -1 everywhere; outputs are averages of values in [-2, 2]).
    CHECK(std::none_of(ref.begin(), ref.end(), [](float v) { return std::isnan(v); }));
  }
}

TEST_CASE("kernels agree with the reference where scores and values overflow, as PyTorch computes it",
          "[kernels]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<AttentionShape> shapes{
      {1, 1, 1, 1, 1}, {1, 7, 2, 2, 3}, {2, 77, 3, 1, 5}, {1, 130, 4, 2, 8}, {1, 300, 2, 2, 8}, {1, 600, 2, 1, 4},
      {2, 1100, 2, 2, 4}};
  for (const auto& s : shapes) {
    INFO("B=" << s.batch << " T=" << s.tokens << " heads=" << s.heads << " kv=" << s.kv_heads << " hd=" << s.head_dim);
    Packed p(s, 77 + s.tokens);
    const std::size_t T = s.tokens, last = T - 1, mid = T / 2;
    const auto at = [&](std::size_t b, std::size_t token) { return p.data.data() + (b * T + token) * p.ld; };
    // Batch 0, kv head 0: every key's column 0 positive, but token 0's -inf; the middle token's query inf
    // in column 0. Its scores in head 0 are then inf (NaN for the first token's -inf), and query 0 sees
    // only -inf or inf: both rows come out NaN. The last token's value is inf in column 0 and NaN in
    // column 1: 0 * inf and 0 * NaN make those columns NaN for every earlier query.
    for (std::size_t j = 0; j < T; ++j) at(0, j)[p.q_width] = std::fabs(at(0, j)[p.q_width]) + 0.5f;
    at(0, 0)[p.q_width] = -inf;
    at(0, mid)[0] = inf;
    at(0, last)[p.q_width + p.kv_width] = inf;
    if (s.head_dim > 1) at(0, last)[p.q_width + p.kv_width + 1] = nan;
    // An early token's value is inf in column 2 (where head_dim leaves columns enough that plenty stays
    // finite): NaN there for the queries before it (the fused kernel skips each query's future keys
    // inside a tile too, and must still follow this rule).
    const std::size_t early = T / 8 + 1;
    if (s.head_dim > 4 && early < T) at(0, early)[p.q_width + p.kv_width + 2] = inf;
    // And a later token's, NaN in column 3: past the first query tile, so the queries of the second that
    // come before it see it in a key tile that starts before theirs (diag > 0).
    const std::size_t later = T / 2 + 3;
    if (s.head_dim > 4 && later < T) at(0, later)[p.q_width + p.kv_width + 3] = nan;
    if (s.batch > 1) at(1, 0)[0] = 3.4028234663852886e38f;  // the largest float32 in a query
    const std::vector<float> ref = p.run(false);
    near(p.run(true), ref);
    near(p.run(true, 1), ref);
    for (const VectorIsa isa : runnable_isas()) {
      INFO("build " << isa_info(isa).name);
      near(p.run_with(isa), ref);
    }
    near(p.run_unfused(), ref);
    // PyTorch's rules, seen in the reference: head 0 of the first and the middle query is all NaN, every
    // query before the last has NaN in head 0's column 0; and plenty stays finite.
    for (std::size_t d = 0; d < s.head_dim; ++d) {
      CHECK(std::isnan(ref[d]));
      CHECK(std::isnan(ref[mid * p.q_width + d]));
    }
    for (std::size_t i = 0; i < last; ++i) CHECK(std::isnan(ref[i * p.q_width]));
    if (s.head_dim > 4 && early < T)
      for (std::size_t i = 0; i < early; ++i) CHECK(std::isnan(ref[i * p.q_width + 2]));
    if (s.head_dim > 4 && later < T)
      for (std::size_t i = 0; i < later; ++i) CHECK(std::isnan(ref[i * p.q_width + 3]));
    const auto finite = std::count_if(ref.begin(), ref.end(), [](float v) { return std::isfinite(v); });
    if (s.tokens > 7) CHECK(finite > static_cast<std::ptrdiff_t>(ref.size() / 8));
  }
}

TEST_CASE("the softmax max and exp of every build the CPU can run give the scalar bits", "[kernels]") {
  const std::vector<VectorIsa> isas = runnable_isas();
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
  // NaN anywhere (in a vector block, in the tail, or as the running maximum) makes the maximum NaN, as
  // PyTorch's does; +inf is the maximum; a row of -inf has -inf.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const std::size_t n : {1, 7, 8, 9, 16, 17, 33, 40}) {
    for (std::size_t at = 0; at < n; at += 3) {
      std::vector<float> x(n, 1.0f);
      x[at] = nan;
      std::vector<float> y(n, -inf);
      y[at] = inf;
      for (const VectorIsa isa : isas) {
        INFO("n=" << n << " at=" << at << " isa=" << static_cast<int>(isa));
        CHECK(std::isnan(max_with(isa, x.data(), n, -inf)));
        CHECK(max_with(isa, y.data(), n, -inf) == inf);
        std::vector<float> ninf(n, -inf);
        CHECK(max_with(isa, ninf.data(), n, -inf) == -inf);
        CHECK(std::isnan(max_with(isa, ninf.data(), n, nan)));
        std::vector<float> e = x;
        CHECK(std::isnan(exp_shift_sum_with(isa, e.data(), n, 1.0f)));
      }
    }
  }
}

TEST_CASE("decoding one token against a KV cache matches the reference in every build", "[kernels][decode]") {
  struct Case {
    DecodeShape shape;
    std::size_t extra;  // floats of other data between cache rows (a row of a wider cache)
  };
  const std::vector<Case> cases{
      {{1, 1, 1, 1}, 0},        // one cached token, head_dim 1: its weight is 1, the output its value
      {{7, 2, 2, 3}, 0},        // fewer keys than a part, odd head_dim
      {{300, 4, 2, 5}, 3},      // two parts per key/value head, strided rows
      {{1029, 12, 4, 64}, 0},   // GQA at GPT-2's head size, parts that do not divide the cache
      {{2048, 12, 12, 64}, 0},  // MHA
      {{600, 6, 1, 17}, 1},     // multi-query, head_dim past a vector with a tail
  };
  for (const auto& c : cases) {
    const DecodeShape& s = c.shape;
    INFO("T=" << s.cache_tokens << " heads=" << s.heads << " kv=" << s.kv_heads << " hd=" << s.head_dim);
    const std::size_t ld = s.kv_heads * s.head_dim + c.extra;
    TorchGenerator gen(s.cache_tokens);
    std::vector<float> q(s.heads * s.head_dim), k(s.cache_tokens * ld), v(s.cache_tokens * ld);
    for (auto& x : q) x = gen.uniform(-3.0f, 3.0f);
    for (auto& x : k) x = gen.uniform(-3.0f, 3.0f);
    for (auto& x : v) x = gen.uniform(-2.0f, 2.0f);
    std::vector<float> ref(q.size(), -9.0f);
    decode_attention_reference(s, {q.data(), k.data(), v.data(), ld, ref.data()});
    // The reference itself: weights that sum to 1 make every output an average of values in [-2, 2].
    CHECK(std::all_of(ref.begin(), ref.end(), [](float x) { return x >= -2.0f && x <= 2.0f; }));
    if (s.cache_tokens == 1) CHECK(ref[0] == v[0]);
    for (const VectorIsa isa : runnable_isas())
      for (const unsigned threads : {1u, 2u, 5u}) {
        INFO("build " << isa_info(isa).name << ", " << threads << " threads");
        std::vector<float> out(q.size(), -9.0f);
        decode_attention_with(isa, s, {q.data(), k.data(), v.data(), ld, out.data()}, threads);
        near(out, ref);
      }
    // The decode step is the causal kernel's last row: the same numbers through the fused kernel, with the
    // query as the last of the cache's tokens.
    if (s.kv_heads * s.head_dim + c.extra == ld && c.extra == 0) {
      const std::size_t T = s.cache_tokens, qw = s.heads * s.head_dim, kw = s.kv_heads * s.head_dim;
      std::vector<float> qs(T * qw, 0.0f), out(T * qw);
      std::copy(q.begin(), q.end(), qs.begin() + static_cast<std::ptrdiff_t>((T - 1) * qw));
      causal_attention_fused({1, T, s.heads, s.kv_heads, s.head_dim}, {qs.data(), qw, k.data(), kw, v.data(), kw, out.data(), qw}, 2);
      near(out.data() + (T - 1) * qw, ref.data(), qw);
    }
  }
}

TEST_CASE("a decode step follows PyTorch where scores overflow", "[kernels][decode]") {
  const float inf = std::numeric_limits<float>::infinity();
  const DecodeShape s{700, 2, 1, 4};
  const std::size_t ld = 4;
  TorchGenerator gen(3);
  std::vector<float> q(8), k(s.cache_tokens * ld), v(s.cache_tokens * ld);
  for (auto& x : q) x = gen.uniform(-1.0f, 1.0f);
  for (auto& x : k) x = gen.uniform(-1.0f, 1.0f);
  for (auto& x : v) x = gen.uniform(-1.0f, 1.0f);
  q[0] = inf;             // head 0: a score of +-inf on every key: NaN throughout, as softmax gives
  v[500 * ld + 1] = inf;  // an infinite value: head 1's column 1 is inf (head 0's is NaN already)
  std::vector<float> ref(8);
  decode_attention_reference(s, {q.data(), k.data(), v.data(), ld, ref.data()});
  for (std::size_t d = 0; d < 4; ++d) CHECK(std::isnan(ref[d]));
  CHECK(std::isinf(ref[5]));
  CHECK(std::isfinite(ref[4]));
  for (const VectorIsa isa : runnable_isas()) {
    INFO("build " << isa_info(isa).name);
    std::vector<float> out(8);
    decode_attention_with(isa, s, {q.data(), k.data(), v.data(), ld, out.data()}, 2);
    near(out, ref);
  }
}

TEST_CASE("each build names itself and its FMA calibration runs", "[kernels]") {
  // Not a timing test: the rate depends on the machine and its load; only that it is a rate is asserted.
  const std::vector<std::string> names{"portable", "avx2", "avx512"};
  const std::vector<VectorIsa> isas = runnable_isas();
  for (std::size_t i = 0; i < isas.size(); ++i) {
    CHECK(isa_info(isas[i]).name == names[i]);
    const double rate = fma_peak_gflops(isas[i], 1, 0.02);
    CHECK(std::isfinite(rate));
    CHECK(rate > 0.0);
    // Every build's column block divides the fused kernel's query tile (128), which its padding assumes.
    CHECK(128 % isa_info(isas[i]).nr == 0);
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
    near(mha.forward(*x, gen, DropoutRng::Default), mha_steps);
    near(mha_forward_fused(mha.weights(), *x), mha_steps);
    const Tensor3 gqa_steps = gqa.attend(*x, gen, DropoutRng::Default).context_vecs;
    near(gqa_forward_fused(gqa.weights(), *x), gqa_steps);
  }
  // Inputs whose projections overflow: the fast paths give the step-by-step pass's NaN and inf, and its
  // finite values where there are any.
  Tensor3 huge = xt::empty<float>({2, 150, 12});  // (2, 150, 12)
  for (auto& v : huge) v = rnd.uniform(-1.0f, 1.0f);
  for (std::size_t d = 0; d < 12; ++d) {
    huge(0, 40, d) = 1e30f;                       // a token whose scores overflow
    huge(1, 149, d) = d % 2 ? 3.4e38f : -3.4e38f;  // the last token: values overflow, poisoning those before it
  }
  TorchGenerator gen(7);
  const MultiHeadAttention mha(12, 8, 0.0, 4, true, gen);
  const GroupedQueryAttention gqa(12, 8, 0.0, 4, 2, false, gen);
  const Tensor3 mha_steps = mha.attend(huge, gen, DropoutRng::Default).context_vecs;
  const Tensor3 gqa_steps = gqa.attend(huge, gen, DropoutRng::Default).context_vecs;
  const auto finite = std::count_if(mha_steps.begin(), mha_steps.end(), [](float v) { return std::isfinite(v); });
  CHECK(finite > 0);
  CHECK(finite < static_cast<std::ptrdiff_t>(mha_steps.size()));
  const Tensor3 mha_fast = mha.forward(huge, gen, DropoutRng::Default), mha_fused = mha_forward_fused(mha.weights(), huge);
  const Tensor3 gqa_fast = gqa_forward_fused(gqa.weights(), huge);
  near(mha_fast, mha_steps);
  near(mha_fused, mha_steps);
  near(gqa_fast, gqa_steps);
  // Values of 1e30 and more dominate a tensor's sum of squares, so the whole-tensor NMSE cannot see a
  // normal-sized value gone wrong beside them. The 40 tokens before the overflowing one see none of it
  // (causal masking): their rows, compared alone, are ordinary numbers.
  const std::size_t before = 40 * 8;  // batch 0, tokens 0..39, d_out 8
  REQUIRE(std::all_of(mha_steps.begin(), mha_steps.begin() + before, [](float v) { return std::fabs(v) < 10.0f; }));
  near(mha_fast.data(), mha_steps.data(), before);
  near(mha_fused.data(), mha_steps.data(), before);
  near(gqa_fast.data(), gqa_steps.data(), before);
}

TEST_CASE("every bench implementation computes the chapter's function within its entry's bound", "[kernels][modules]") {
  // The bench's own modules (one set of weights for all) at a shape of more than one tile, every entry of
  // ATTN_BENCH_IMPLS run as attn-bench runs it, against the chapter's step-by-step pass.
  BenchOptions o;
  o.batch = 2;
  o.tokens = 150;
  o.dim = 24;
  o.heads = 4;
  o.kv_groups = 2;
  const BenchModules m = make_bench_modules(o);
  TorchGenerator gen(0);
  const Tensor3 steps = m.mha.attend(m.x, gen, DropoutRng::Default).context_vecs;  // (2, 150, 24)
  // gqa's module is the same function: its own step-by-step pass agrees.
  near(m.gqa.attend(m.x, gen, DropoutRng::Default).context_vecs, steps);
  std::vector<std::string> names;
  for (const BenchImpl& impl : bench_impl_table()) {
    INFO("implementation " << impl.name << ": bound " << impl.max_nmse);
    names.push_back(impl.name);
    // No entry may allow more than the bound every fast path here is held to.
    CHECK(impl.max_nmse <= kMaxNmse);
    for (const unsigned threads : {1u, 2u}) {
      const Tensor3 out = impl.run(m, threads);
      REQUIRE(out.shape() == steps.shape());
      const Comparison c = compare(out.data(), steps.data(), out.size());
      INFO(threads << " threads: misplaced non-finite values: " << c.misplaced << ", NMSE: " << c.nmse);
      CHECK(c.misplaced == 0);
      CHECK(c.nmse <= impl.max_nmse);
    }
    CHECK(impl.gflop(o) > 0.0);
    CHECK(fill_impl_help(impl.help, "4").find_first_of("{}") == std::string::npos);  // no slot left unfilled
  }
  CHECK(names == bench_impls());  // the command line's names are the table's, in its order
}

TEST_CASE("a bench row's range is its fastest, median and slowest run, and its spread is the range over the median",
          "[kernels]") {
  const TimeRange odd = time_range({0.3, 0.1, 0.2});
  CHECK(odd.min_s == 0.1);
  CHECK(odd.median_s == 0.2);
  CHECK(odd.max_s == 0.3);
  CHECK(spread_percent(odd) == Approx(100.0));  // (0.3 - 0.1) / 0.2
  const TimeRange even = time_range({4.0, 1.0, 3.0, 2.0});
  CHECK(even.median_s == 2.5);
  CHECK(spread_percent(time_range({0.5})) == 0.0);  // one run: a point, no spread
  CHECK_THROWS_AS(time_range({}), std::logic_error);
  CHECK(range_ms({0.0012345, 0.002, 0.0034567}) == "1.234..3.457");
}

TEST_CASE("the busy-machine warning: a spread of 9% is quiet, 11% names the widest row and what to do", "[kernels]") {
  const auto row = [](const std::string& name, double spread) {
    return NamedRange{name, {1.0, 1.0, 1.0 + spread / 100.0}};  // median 1 s, so the spread is the percent
  };
  CHECK(spread_percent(row("x", 9).range) == Approx(9.0));
  CHECK(spread_percent(row("x", 11).range) == Approx(11.0));
  CHECK_FALSE(busy_warning({row("wrapper", 9), row("mha", 0), row("fused", 9)}));
  CHECK_FALSE(busy_warning({}));
  const auto one = busy_warning({row("wrapper", 9), row("mha", 11), row("fused", 2)});
  REQUIRE(one);
  CHECK(*one == "attn: bench: the machine is busy: mha's times vary by 11.0% of their median, more than 10%; close "
                "other programs and run it again, and compare only rows whose ranges do not overlap");
  CHECK(one->find('\n') == std::string::npos);  // one line
  // Several busy rows: the widest is named, the others counted.
  const auto three = busy_warning({row("wrapper", 11), row("mha", 40), row("fused", 9), row("gqa", 12)});
  REQUIRE(three);
  CHECK(three->rfind("attn: bench: the machine is busy: mha's times vary by 40.0% of their median, more than 10% "
                     "(2 other rows too); ",
                     0) == 0);
  // A decode row is named by its implementation and cache length.
  CHECK(busy_warning({row("gqa 1024", 25)})->find(": gqa 1024's times vary by 25.0%") != std::string::npos);
}

TEST_CASE("attn bench says a row is faster only when the two ranges do not overlap", "[kernels]") {
  const auto ms = [](const std::string& name, double min, double median, double max) {
    return NamedRange{name, {min / 1e3, median / 1e3, max / 1e3}};
  };
  // Disjoint: the faster's slowest run beats the other's fastest; the ratio is of the medians, whichever
  // row comes first.
  const NamedRange fused = ms("fused", 175.0, 176.0, 184.0), mha = ms("mha", 520.0, 528.0, 540.0);
  CHECK(speed_claim(fused, mha) == std::optional<std::string>("fused is 3.00x faster than mha"));
  CHECK(speed_claim(mha, fused) == speed_claim(fused, mha));
  // Overlapping: the issue's busy machine, where mha's median came out lower than fused's. No claim, in
  // either direction; both ranges are given instead.
  const NamedRange busy_fused = ms("fused", 170.0, 250.0, 700.0), busy_mha = ms("mha", 190.0, 200.0, 650.0);
  const auto within = speed_claim(busy_fused, busy_mha);
  REQUIRE(within);
  CHECK(*within == "mha and fused are within each other's spread (mha 190.000..650.000 ms, fused 170.000..700.000 "
                   "ms): this run cannot tell which is faster");
  CHECK(within->find("faster than") == std::string::npos);
  CHECK(speed_claim(busy_mha, busy_fused) == within);
  // Touching ranges overlap: one run of each took the same time.
  CHECK(speed_claim(ms("a", 1.0, 1.5, 2.0), ms("b", 2.0, 2.5, 3.0))->find("within each other's spread") !=
        std::string::npos);
  // Barely apart is apart.
  CHECK(speed_claim(ms("a", 1.0, 1.5, 2.0), ms("b", 2.001, 3.0, 3.5)) ==
        std::optional<std::string>("a is 2.00x faster than b"));
  // No time, no sentence.
  CHECK_FALSE(speed_claim(NamedRange{"a", {}}, mha));
}

TEST_CASE("attn bench runs every implementation on the same function (tiny shape, no timing asserted)",
          "[bench]") {
  const auto r = attn_test::run({"bench", "--batch", "1", "--tokens", "520", "--dim", "64", "--heads", "4",
                                 "--kv-groups", "2", "--repeats", "1", "--json"});
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["results"].size() == attn::bench_impls().size());
  std::vector<std::string> names;
  for (const auto& row : doc["results"]) {
    names.push_back(row["impl"]);
    CHECK(row["max_abs_diff"].get<double>() <= 1e-4);
    CHECK(row["median_s"].get<double>() > 0.0);
    CHECK(row["times_s"].size() == 1);
  }
  CHECK(names == attn::bench_impls());  // every implementation, in the bench's own order
  // mha holds the whole (1, 4, 520, 520) score tensor (4.1 MB); fused only tiles, per thread.
  const auto peak_mb = [&](const std::string& impl) {
    for (const auto& row : doc["results"])
      if (row["impl"] == impl) return row["peak_mb"].get<double>();
    FAIL("no row for " << impl);
    return 0.0;
  };
  CHECK(peak_mb("mha") > 4.0 * 520 * 520 * 4 / (1024.0 * 1024.0));
  CHECK(peak_mb("fused") < peak_mb("mha") / 2);
  CHECK(attn_test::run({"bench", "--dim", "100", "--heads", "12"}).status == 2);
  CHECK(attn_test::run({"bench", "--impl", "cuda"}).status == 2);
  // attn takes each implementation's name for --impl (it goes on to refuse the --cache after it, checked
  // later, so nothing runs), and its help shows them all.
  const std::string help = attn_test::run({"bench", "--help"}).out;
  for (const std::string& name : attn::bench_impls()) {
    INFO(name);
    CHECK(help.find(name) != std::string::npos);
    CHECK(attn_test::run({"bench", "--impl", name, "--cache", "0"}).err.rfind("attn: --cache: ", 0) == 0);
  }
  CHECK(attn_test::run({"bench", "--impl", "cuda", "--cache", "0"}).err.rfind("attn: --impl: ", 0) == 0);
  // The machine's figures, measured in the same run: the build the CPU's flags chose, a peak above the
  // rate of every implementation, and the core OpenBLAS named.
  const auto& m = doc["machine"];
  CHECK(m["isa"] == isa_info(best_vector_isa()).name);
  CHECK(m["fma_peak_gflops"].get<double>() > 0.0);
  CHECK(m["sgemm_gflops"].get<double>() > 0.0);
  CHECK(!m["openblas_core"].get<std::string>().empty());
  for (const auto& row : doc["results"])
    CHECK(row["peak_percent"].get<double>() ==
          Approx(100.0 * row["gflops"].get<double>() / m["fma_peak_gflops"].get<double>()));
}

namespace {

// A claim of the bench's, read back: "X is Rx faster than Y", or "X and Y are within each other's spread
// (X a..b ms, Y c..d ms): ...".
struct Claim {
  bool faster = false;
  std::string x, y;
  double ratio = 0;                          // faster claims
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;  // within claims, as printed
};
std::optional<Claim> parse_claim(const std::string& line) {
  static const std::regex faster(R"(^(\w+) is ([0-9.]+)x faster than (\w+)$)");
  static const std::regex within(R"(^(\w+) and (\w+) are within each other's spread \((\w+) ([0-9.]+)\.\.([0-9.]+) ms, )"
                                 R"((\w+) ([0-9.]+)\.\.([0-9.]+) ms\): this run cannot tell which is faster$)");
  std::smatch m;
  if (std::regex_match(line, m, faster)) return Claim{true, m[1], m[3], std::stod(m[2])};
  if (std::regex_match(line, m, within)) {
    CHECK(m[3] == m[1]);
    CHECK(m[6] == m[2]);
    return Claim{false, m[1], m[2], 0, std::stod(m[4]), std::stod(m[5]), std::stod(m[7]), std::stod(m[8])};
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("attn bench prints each row's range and claims a speed-up only where the ranges do not overlap",
          "[bench]") {
  // The text report: read the table's ranges and the claims back, and hold each claim to the ranges
  // printed above it. Printed figures are rounded the same way, which keeps "a < b" as "a <= b".
  const std::vector<std::string> shape{"--batch", "1", "--tokens", "200", "--dim", "64", "--heads", "4",
                                       "--kv-groups", "2", "--repeats", "5"};
  std::vector<std::string> args{"bench"};
  args.insert(args.end(), shape.begin(), shape.end());
  const auto text = attn_test::run(args);
  REQUIRE(text.status == 0);
  CHECK(text.out.find("min..max: the fastest and the slowest of them") != std::string::npos);
  struct Printed {
    double median, min, max;
  };
  std::map<std::string, Printed> rows;
  std::vector<Claim> claims;
  std::istringstream lines(text.out);
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("impl ", 0) == 0) {
      std::istringstream header(line);
      std::vector<std::string> columns{std::istream_iterator<std::string>(header), {}};
      REQUIRE(columns.size() >= 3);
      CHECK(columns[1] == "median_ms");
      CHECK(columns[2] == "min..max_ms");  // the range beside the median
      in_table = true;
      continue;
    }
    if (in_table && line.empty()) in_table = false;
    if (in_table) {
      static const std::regex row(R"(^(\w+) +([0-9.]+) +([0-9.]+)\.\.([0-9.]+) .*$)");
      std::smatch m;
      REQUIRE(std::regex_match(line, m, row));
      rows[m[1]] = {std::stod(m[2]), std::stod(m[3]), std::stod(m[4])};
      continue;
    }
    if (const auto claim = parse_claim(line)) claims.push_back(*claim);
  }
  REQUIRE(rows.size() == attn::bench_impls().size());
  for (const auto& [name, r] : rows) {
    INFO(name);
    CHECK(r.min <= r.median);
    CHECK(r.median <= r.max);
  }
  // One sentence for fused against each other implementation, and each consistent with the table.
  REQUIRE(claims.size() == rows.size() - 1);
  std::set<std::string> against;
  for (const Claim& c : claims) {
    INFO(c.x << " / " << c.y);
    REQUIRE(rows.count(c.x) == 1);
    REQUIRE(rows.count(c.y) == 1);
    CHECK((c.x == "fused" || c.y == "fused"));
    against.insert(c.x == "fused" ? c.y : c.x);
    const Printed &x = rows[c.x], &y = rows[c.y];
    if (c.faster) {
      CHECK(x.max <= y.min);  // x's slowest run no slower than y's fastest
      CHECK(x.median <= y.median);
      CHECK(c.ratio >= 1.0);
    } else {
      CHECK(c.x_min == x.min);  // the ranges quoted are the table's
      CHECK(c.x_max == x.max);
      CHECK(c.y_min == y.min);
      CHECK(c.y_max == y.max);
      CHECK(x.min <= y.max);  // they overlap
      CHECK(y.min <= x.max);
    }
  }
  CHECK(against.size() == rows.size() - 1);
  // The busy-machine line on the error stream when a printed range is more than 10% of its median (by a
  // margin for the rounding); a quiet run says nothing.
  double widest = 0;
  for (const auto& [name, r] : rows) widest = std::max(widest, 100.0 * (r.max - r.min) / r.median);
  INFO("widest printed spread " << widest << "%; stderr: " << text.err);
  const bool warned = text.err.find("attn: bench: the machine is busy: ") != std::string::npos;
  if (widest > 12.0) CHECK(warned);
  if (widest < 8.0) CHECK_FALSE(warned);

  // The JSON under --quick: each row's min, median and max, its spread, the claims held to the exact
  // times, the warning iff a spread is over 10%; no machine figure was measured, so none is given.
  args.push_back("--json");
  args.push_back("--quick");
  const auto json = attn_test::run(args);
  REQUIRE(json.status == 0);
  const auto doc = nlohmann::json::parse(json.out);
  CHECK(doc["config"]["quick"] == true);
  for (const char* key : {"fma_peak_gflops", "sgemm_gflops", "openblas_sgemm_gflops"}) CHECK(doc["machine"][key].is_null());
  std::map<std::string, TimeRange> exact;
  bool busy = false;
  for (const auto& row : doc["results"]) {
    INFO(row.dump());
    const std::vector<double> times = row["times_s"];
    const TimeRange r{row["min_s"], row["median_s"], row["max_s"]};
    CHECK(r.min_s == *std::min_element(times.begin(), times.end()));
    CHECK(r.max_s == *std::max_element(times.begin(), times.end()));
    CHECK(r.min_s <= r.median_s);
    CHECK(r.median_s <= r.max_s);
    CHECK(row["spread_percent"].get<double>() == Approx(100.0 * (r.max_s - r.min_s) / r.median_s));
    busy = busy || row["spread_percent"].get<double>() > 10.0;
    CHECK(row["peak_percent"].is_null());
    CHECK(row["sgemm_percent"].is_null());
    exact[row["impl"]] = r;
  }
  REQUIRE(exact.size() == attn::bench_impls().size());
  REQUIRE(doc["claims"].size() == exact.size() - 1);
  for (const auto& sentence : doc["claims"]) {
    const auto c = parse_claim(sentence);
    REQUIRE(c);
    const TimeRange &x = exact[c->x], &y = exact[c->y];
    INFO(sentence.get<std::string>());
    const bool apart = x.max_s < y.min_s || y.max_s < x.min_s;
    CHECK(c->faster == apart);  // a speed-up exactly when the ranges do not overlap
    if (c->faster) CHECK(c->ratio == Approx(y.median_s / x.median_s).epsilon(0.01));
  }
  CHECK(doc["busy_warning"].is_null() == !busy);
  if (busy) CHECK(json.err.find(doc["busy_warning"].get<std::string>() + "\n") != std::string::npos);
  else CHECK(json.err.find("the machine is busy") == std::string::npos);
  // And in text, --quick leaves the machine's shares out rather than dividing by nothing.
  const auto quick_text = attn_test::run({"bench", "--quick", "--batch", "1", "--tokens", "8", "--dim", "8",
                                          "--heads", "2", "--kv-groups", "1", "--repeats", "1", "--impl", "fused"});
  REQUIRE(quick_text.status == 0);
  CHECK(quick_text.out.find("--quick: its FMA peak, SGEMM rates and memory bandwidth not measured") != std::string::npos);
  CHECK(std::regex_search(quick_text.out, std::regex(R"(\nfused +[0-9.]+ +[0-9.]+\.\.[0-9.]+ +[0-9.]+ +- +- )")));
}

TEST_CASE("attn bench --decode times MHA and GQA decode steps on each cache length (no timing asserted)",
          "[bench][decode]") {
  const auto r = attn_test::run({"bench", "--decode", "--cache", "16,300", "--dim", "32", "--heads", "4",
                                 "--kv-groups", "2", "--repeats", "2", "--json"});
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["lesson"] == "bench-decode");
  CHECK(doc["machine"]["copy_gbps"].get<double>() > 0.0);
  REQUIRE(doc["results"].size() == 4);
  const std::vector<std::pair<std::string, std::size_t>> rows{{"mha", 16}, {"gqa", 16}, {"mha", 300}, {"gqa", 300}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& row = doc["results"][i];
    INFO(rows[i].first << " " << rows[i].second);
    CHECK(row["impl"] == rows[i].first);
    CHECK(row["cache_tokens"] == rows[i].second);
    const std::size_t kv = rows[i].first == "mha" ? 4 : 2;
    CHECK(row["kv_heads"] == kv);
    // Keys and values of every cached token, every key/value head, head_dim 8, float32.
    CHECK(row["bytes"].get<double>() == 2.0 * rows[i].second * kv * 8 * 4);
    CHECK(row["max_abs_diff"].get<double>() <= 1e-5);
    CHECK(row["times_s"].size() == 2);
    CHECK(row["min_s"].get<double>() <= row["median_s"].get<double>());
    CHECK(row["median_s"].get<double>() <= row["max_s"].get<double>());
    CHECK(row["spread_percent"].get<double>() >= 0.0);
    CHECK(row["gbps"].get<double>() == Approx(row["bytes"].get<double>() / row["median_s"].get<double>() / 1e9));
    CHECK(row["layers"].get<std::size_t>() >= 1);
    CHECK(row["layers"].get<std::size_t>() <= 4096);
  }
  const auto text = attn_test::run({"bench", "--decode", "--cache", "8", "--dim", "16", "--heads", "2",
                                    "--kv-groups", "1", "--repeats", "1"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("us/token  min..max_us") != std::string::npos);
  CHECK(text.out.find("%copy") != std::string::npos);
  CHECK(attn_test::run({"bench", "--decode", "--cache", "0"}).status == 2);
  CHECK(attn_test::run({"bench", "--decode", "--cache", "200000"}).status == 2);
}

TEST_CASE("attn bench is refused past --max-memory before anything is allocated and in the lessons' words",
          "[bench][errors]") {
  // The example: keys and values of 128k tokens of 4,096 dims, 2 GiB each, past the default budget of 4 GiB.
  const std::vector<std::string> big{"bench", "--decode", "--cache", "131072", "--dim", "4096", "--heads", "16"};
  const std::string line =
      "attn: attn bench would need an estimated 4.1 GiB of memory, more than the budget of 4.0 GiB; use fewer tokens, "
      "dimensions, heads or a smaller batch, or raise it with --max-memory (see 'attn bench --help')\n";
  const auto refused = attn_test::run(big);
  CHECK(refused.status == 2);
  CHECK(refused.out.empty());
  CHECK(refused.err == line);
  // A lesson past its budget says it in the same words.
  CHECK_THAT(attn_test::run({"mha", "--random", "8192x4096", "--d-out", "4096", "--heads", "4", "--batch", "1"}).err,
             Catch::Matches("attn: attn mha would need an estimated [0-9.]+ GiB of memory, more than the budget of 4.0 "
                            "GiB; use fewer tokens, dimensions, heads or a smaller batch, or raise it with --max-memory "
                            "\\(see 'attn mha --help'\\)\n"));
  // The estimate: the pools of keys and values (one layer of 2 GiB each: the pool is at least 1 GiB), and the
  // process's base; --max-memory past it lets the run go on (check_bench is all that runs here).
  BenchOptions o;
  o.decode = true;
  o.cache = {131072};
  o.dim = 4096;
  o.heads = 16;
  const std::size_t pools = std::size_t{4} << 30;
  CHECK(bench_memory_bytes(o) >= pools + kBaseBytes);
  CHECK(bench_memory_bytes(o) <= pools + kBaseBytes + (std::size_t{1} << 20));
  CHECK_THROWS_WITH(check_bench(o), line.substr(6, line.find(" (see") - 6));
  o.max_memory = std::size_t{5} << 30;
  CHECK_NOTHROW(check_bench(o));
  o.max_memory = bench_memory_bytes(o);
  CHECK_NOTHROW(check_bench(o));
  o.max_memory -= 1;
  CHECK_THROWS(check_bench(o));
  // attn-bench itself refuses it before any allocation: under 700 MB of address space, not out of memory.
  attn_test::not_under_asan("it needs more address space than the limit allows");
  const auto direct = attn_test::shell("ulimit -v 700000; " + attn_test::quote(ATTN_BENCH_EXE) +
                                       " --decode --cache 131072 --dim 4096 --heads 16 2>&1 >/dev/null; echo \"exit $?\"");
  CHECK(direct.out == line + "exit 2\n");
  // --max-memory is read as the lessons read it, default 4G, and a forward run is estimated too.
  CHECK(attn_test::run({"bench", "--help"}).out.find("--max-memory SIZE=4G") != std::string::npos);
  for (const char* size : {"512", "-4G", "5x", "2P", "0"}) {
    INFO(size);
    std::string lesson = attn_test::run({"simple", "--max-memory", size}).err;
    lesson.replace(lesson.find("attn simple"), 11, "attn bench");
    CHECK(attn_test::run({"bench", "--max-memory", size}).err == lesson);
  }
  // (64, 2048, 4096) inputs, 2 GiB each, and scores of 2^28 numbers, the most any tensor may hold.
  const auto forward = attn_test::run({"bench", "--batch", "64", "--tokens", "2048", "--dim", "4096", "--heads", "1",
                                       "--kv-groups", "1", "--impl", "fused"});
  CHECK(forward.status == 2);
  CHECK_THAT(forward.err, Catch::StartsWith("attn: attn bench would need an estimated 1"));
  CHECK_THAT(forward.err, Catch::Contains(" GiB of memory, more than the budget of 4.0 GiB;"));
}

TEST_CASE("attn bench --isa runs every build this CPU can with oneDNN capped alike and refuses a wider one",
          "[bench]") {
  // Every build this CPU runs: the fast rows then run it (and oneDNN under the same cap), and agree with mha.
  // oneDNN's kernels under each narrower build's cap (the widest build caps nothing: AVX-512 is never narrower).
  const std::map<std::string, std::string> onednn{{"avx2", "avx2"}, {"portable", "sse41"}};
  const std::string widest = isa_name(best_vector_isa());
  // Without --isa: the widest build, and oneDNN's own widest kernels.
  const auto plain = attn_test::run({"bench", "--impl", "fused", "--batch", "1", "--tokens", "20", "--dim", "16",
                                     "--heads", "2", "--kv-groups", "1", "--repeats", "1", "--quick", "--json"});
  REQUIRE(plain.status == 0);
  const auto plain_doc = nlohmann::json::parse(plain.out);
  CHECK(plain_doc["machine"]["isa"] == widest);
  const std::string onednn_widest = plain_doc["machine"]["onednn_isa"];
  std::size_t ran = 0;
  for (const std::string& isa : bench_isas()) {
    INFO("--isa " << isa);
    if (isa_refusal(isa, best_vector_isa())) continue;  // a wider build: refused below
    ++ran;
    const auto r = attn_test::run({"bench", "--isa", isa, "--impl", "fused,gqa", "--batch", "1", "--tokens", "300",
                                   "--dim", "64", "--heads", "4", "--kv-groups", "2", "--repeats", "1", "--quick",
                                   "--json"});
    REQUIRE(r.status == 0);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["machine"]["isa"] == isa);
    CHECK(doc["machine"]["cpu_isa"] == widest);
    // --isa naming the CPU's widest build is the default: oneDNN keeps its own widest kernels then.
    CHECK(doc["machine"]["onednn_isa"] == (isa == widest ? onednn_widest : onednn.at(isa)));
    REQUIRE(doc["results"].size() == 2);
    for (const auto& row : doc["results"]) CHECK(row["max_abs_diff"].get<double>() <= 1e-4);
    const auto decode = attn_test::run({"bench", "--decode", "--isa", isa, "--cache", "300", "--dim", "32", "--heads",
                                        "4", "--kv-groups", "2", "--repeats", "1", "--quick", "--json"});
    REQUIRE(decode.status == 0);
    const auto d = nlohmann::json::parse(decode.out);
    CHECK(d["machine"]["isa"] == isa);
    REQUIRE(d["results"].size() == 2);
    for (const auto& row : d["results"]) CHECK(row["max_abs_diff"].get<double>() <= 1e-5);
    // The text says so when the build is narrower than the CPU's widest.
    const auto text = attn_test::run({"bench", "--isa", isa, "--impl", "fused", "--batch", "1", "--tokens", "20",
                                      "--dim", "16", "--heads", "2", "--kv-groups", "1", "--repeats", "1", "--quick"});
    REQUIRE(text.status == 0);
    CHECK(text.out.find("fast kernels: " + isa + " (") != std::string::npos);
    CHECK((text.out.find("--isa's, the CPU's widest being " + widest) != std::string::npos) == (isa != widest));
    CHECK(text.out.find("oneDNN on its " + (isa == widest ? onednn_widest : onednn.at(isa)) + " kernels") !=
          std::string::npos);
  }
  CHECK(ran == static_cast<std::size_t>(best_vector_isa() == VectorIsa::Avx512 ? 3 : best_vector_isa() == VectorIsa::Avx2 ? 2 : 1));
  // A build wider than the CPU's is a usage error, whatever CPU runs the test: the rule, then the command.
  CHECK(isa_refusal("avx512", VectorIsa::Avx2) == "--isa avx512: this CPU cannot run it (its widest build is avx2)");
  CHECK(isa_refusal("avx2", VectorIsa::Scalar) == "--isa avx2: this CPU cannot run it (its widest build is portable)");
  CHECK(isa_refusal("avx512", VectorIsa::Scalar).has_value());
  CHECK(!isa_refusal("avx2", VectorIsa::Avx2));
  CHECK(!isa_refusal("portable", VectorIsa::Scalar));
  CHECK(!isa_refusal("", VectorIsa::Scalar));
  const auto bad = attn_test::run({"bench", "--isa", "sse2"});
  CHECK(bad.status == 2);
  CHECK(bad.err.rfind("attn: --isa: expected avx512, avx2 or portable, got 'sse2'", 0) == 0);
}

TEST_CASE("the fast rows' OpenMP threads are bound one to a CPU and let go after", "[bench]") {
#ifndef _OPENMP
  CHECK(!pin_fast_threads(true, 2));  // a build without OpenMP has no pool to bind, and says so
  return;
#else
  // Each OpenMP thread's CPUs, as the system reports them, in thread order.
  const auto affinities = [](unsigned threads) {
    std::vector<cpu_set_t> sets(threads);
    for (cpu_set_t& set : sets) CPU_ZERO(&set);
    int team = 0;
#pragma omp parallel num_threads(threads)
    {
      if (omp_get_thread_num() == 0) team = omp_get_num_threads();
      sched_getaffinity(0, sizeof(cpu_set_t), &sets[static_cast<std::size_t>(omp_get_thread_num())]);
    }
    REQUIRE(team == static_cast<int>(threads));
    return sets;
  };
  cpu_set_t all;
  CPU_ZERO(&all);
  REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0);
  const unsigned threads = 2;
  REQUIRE(CPU_COUNT(&all) >= static_cast<int>(threads));  // the suite's machines have two CPUs or more
  {
    const PinnedFastThreads pinned(threads);
    const auto sets = affinities(threads);
    for (const cpu_set_t& set : sets) CHECK(CPU_COUNT(&set) == 1);
    CHECK(!CPU_EQUAL(&sets[0], &sets[1]));  // a CPU each
  }
  for (const cpu_set_t& set : affinities(threads)) CHECK(CPU_EQUAL(&set, &all));  // every CPU again
#endif
}

// Every kernel family this CPU can run. OpenBLAS and oneDNN each choose their kernels once, when they load
// (OpenBLAS by its guess of the core, which OPENBLAS_CORETYPE overrides; oneDNN by the feature flags,
// which ONEDNN_MAX_CPU_ISA caps), so this process sees one family only, whichever its environment gives.
// The cases whose numbers depend on those kernels (the golden whole runs, with their data_haswell for the
// AVX2 kernels; the fast paths here; the modules, lessons, book and properties) run again in a child
// process for each family the CPU's own flags say it can run: AVX-512 (OpenBLAS's SkylakeX kernels,
// oneDNN's AVX-512) and AVX2 (Haswell's kernels, which AMD's Zen runs too, and oneDNN's AVX2). Our own
// tile kernels need no child: every build of them is called directly above.
TEST_CASE("the numbers hold under every OpenBLAS and oneDNN kernel family this CPU can run", "[families]") {
  struct Family {
    const char* name;
    bool runs;
    const char* openblas;
    const char* onednn;
  };
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const std::vector<Family> families{{"avx512", avx512, "SkylakeX", "AVX512_CORE"},
                                     {"avx2", avx2, "Haswell", "AVX2"}};
  const std::string self = [] {
    char path[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    return std::string(path, n > 0 ? static_cast<std::size_t>(n) : 0);
  }();
  REQUIRE(!self.empty());
  std::size_t ran = 0;
  for (const auto& f : families) {
    if (!f.runs) continue;
    INFO("family " << f.name << ": OPENBLAS_CORETYPE=" << f.openblas << " ONEDNN_MAX_CPU_ISA=" << f.onednn);
    const std::string env = std::string("OPENBLAS_CORETYPE=") + f.openblas + " ONEDNN_MAX_CPU_ISA=" + f.onednn + " ";
    // The child also checks that OpenBLAS runs the kernels asked for ([families-core]).
    const auto r = attn_test::shell(env + attn_test::quote(self) +
                                    " '[golden]~[step],[kernels],[modules],[lessons],[book],[properties],"
                                    "[families-core]' 2>&1");
    INFO(r.out.substr(r.out.size() > 6000 ? r.out.size() - 6000 : 0));
    CHECK(r.status == 0);
    // "All tests passed (N assertions in M test cases)": every golden configuration among the M.
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex("All tests passed \\([0-9]+ assertions in ([0-9]+) test cases\\)")));
    CHECK(std::stoul(m[1]) > 200);
    ++ran;
  }
  if (ran == 0) attn_test::skip_case("this CPU has neither AVX2 with FMA nor AVX-512: no kernel family to rerun under", true);
}

// Run by each child process above: OpenBLAS runs the family the environment asked for (and on its
// own, whatever kernels it chose have a name).
TEST_CASE("OpenBLAS runs the kernel family OPENBLAS_CORETYPE names", "[families][families-core]") {
  const char* asked = std::getenv("OPENBLAS_CORETYPE");
  CHECK(attn_test::blas_core() == (asked != nullptr ? std::string(asked) : attn_test::blas_core()));
  CHECK(attn_test::blas_core() != "(unknown)");
}
