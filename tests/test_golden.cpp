// attn against PyTorch for many seeds, shapes and inputs: tests/golden/lessons.json holds every step
// of every configuration as computed by the book's own code in PyTorch (tests/golden/generate.py).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support.hpp"

namespace {

using json = nlohmann::json;

// Flattens nested arrays of numbers and the strings "inf", "-inf", "nan" (docs/json.md); anything else
// (another string, null, an object) fails the test rather than becoming a number.
void flatten(const json& j, std::vector<double>& out) {
  if (j.is_array()) {
    for (const auto& e : j) flatten(e, out);
  } else if (j.is_string()) {
    const std::string s = j;
    INFO("a string where a number belongs: " << s);
    REQUIRE((s == "nan" || s == "inf" || s == "-inf"));
    out.push_back(s == "nan" ? NAN : (s == "inf" ? INFINITY : -INFINITY));
  } else {
    INFO("not a number: " << j.dump());
    REQUIRE(j.is_number());
    out.push_back(j.get<double>());
  }
}

// Within 1e-5; NaN equals only NaN, and an infinity only the infinity of the same sign. Both sides are
// float32 values, compared as such: attn writes 1e+20, the shortest decimal of its float, where Python
// writes that float's exact value, 1.0000000200408773e+20.
bool close(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  const double fa = static_cast<float>(a), fb = static_cast<float>(b);
  return std::fabs(fa - fb) <= 1e-5;
}

// The same float32, bit for bit (both sides were written as float32 values): -0.0 is not 0.0, an infinity
// only the same infinity, and NaN only NaN (of either sign: JSON's "nan" does not keep it).
bool same_float(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  return fa == fb && std::signbit(fa) == std::signbit(fb);
}

// OpenBLAS's kernels for AVX2 CPUs (its Haswell core, which AMD's Zen runs too) add some products in
// another order than the AVX-512 ones (SkylakeX) the golden "data" came from, in PyTorch as in attn: for
// the steps where that changes a last bit, lessons.json also holds PyTorch's values on Haswell's kernels
// ("data_haswell", tests/golden/blas_variants.py). attn is held to the values of the kernels it runs on.
using attn_test::blas_core;

const json& expected_data(const json& step) {
  static const bool haswell = attn_test::haswell_kernels();
  const auto variant = step.find("data_haswell");
  return haswell && variant != step.end() ? *variant : step.at("data");
}

// A configuration run on one of the tiny GPT-2s of tests/golden/models (--model).
bool uses_model(const json& c) {
  for (const auto& a : c.at("args"))
    if (a == "--model") return true;
  return false;
}

}  // namespace

TEST_CASE("the golden comparison tells NaN, both infinities, -0.0 and numbers apart", "[golden]") {
  const double inf = INFINITY, nan = NAN;
  CHECK(close(nan, nan));
  CHECK(close(-nan, nan));
  CHECK(close(inf, inf));
  CHECK(close(-inf, -inf));
  CHECK(close(1.0, 1.0 + 1e-6));
  CHECK(close(-0.0, 0.0));  // within 1e-5; same_float tells them apart
  for (const double x : {0.0, 1.0, 3.4028234663852886e38, 1e-45}) {
    CHECK_FALSE(close(nan, x));
    CHECK_FALSE(close(x, nan));
    CHECK_FALSE(close(inf, x));
    CHECK_FALSE(close(x, -inf));
    CHECK_FALSE(same_float(nan, x));
    CHECK_FALSE(same_float(x, inf));
  }
  CHECK_FALSE(close(inf, -inf));
  CHECK_FALSE(close(nan, inf));
  CHECK_FALSE(close(1.0, 1.0 + 2e-5));
  CHECK(same_float(nan, -nan));
  CHECK(same_float(-inf, -inf));
  CHECK(same_float(-0.0, -0.0));
  CHECK(same_float(1e-45, static_cast<double>(1e-45f)));
  CHECK_FALSE(same_float(-0.0, 0.0));
  CHECK_FALSE(same_float(0.0, -0.0));
  CHECK_FALSE(same_float(inf, -inf));
  CHECK_FALSE(same_float(1e-45, 0.0));  // the smallest denormal is not zero
  CHECK_FALSE(same_float(1.0, static_cast<double>(std::nextafter(1.0f, 2.0f))));
  std::vector<double> v;
  flatten(json::parse(R"([[1, -0.0, "nan"], ["inf", "-inf", 1e-45]])"), v);
  REQUIRE(v.size() == 6);
  CHECK((v[0] == 1.0 && v[1] == 0.0 && std::signbit(v[1]) && std::isnan(v[2])));
  CHECK((v[3] == inf && v[4] == -inf && v[5] == 1e-45));
}

TEST_CASE("every step of every golden configuration matches PyTorch within 1e-5, bit for bit under 8 tokens",
          "[golden]") {
  std::ifstream in(ATTN_TESTS_DIR "/golden/lessons.json");
  REQUIRE(in.good());
  const json golden = json::parse(in);
  const auto& cases = golden.at("cases");
  REQUIRE(cases.size() >= 30);
  for (const auto& c : cases) {
    std::vector<std::string> args{c.at("lesson").get<std::string>(), "--json"};
    for (const auto& a : c.at("args")) {
      std::string arg = a;
      if (arg.rfind("inputs/", 0) == 0 || arg.rfind("models/", 0) == 0) arg = ATTN_TESTS_DIR "/golden/" + arg;
      args.push_back(arg);
    }
    INFO("attn " << c.at("lesson").get<std::string>() << " " << c.at("args").dump() << " (OpenBLAS core " << blas_core()
                 << ")");
    const attn_test::Run r = attn_test::run(args);
    REQUIRE(r.status == 0);
    const json doc = json::parse(r.out);
    const auto& steps = doc.at("steps");
    const auto& expected = c.at("steps");
    // The same steps in the same order, none missing and none extra.
    std::vector<std::string> ids, expected_ids;
    for (const auto& s : steps) ids.push_back(s.at("id"));
    for (const auto& s : expected) expected_ids.push_back(s.at("id"));
    REQUIRE(ids == expected_ids);
    // Below PyTorch's vector width (8 floats) every reduction adds in a known order, so inputs of fewer
    // than 8 tokens, the book's six among them, must match PyTorch to the bit. A pretrained model's forward
    // (--model: LayerNorm, GELU, products of n_embd-long rows) is held to 1e-5 only.
    const bool bit_exact = doc.at("inputs").at("tokens").size() < 8 && !uses_model(c);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      INFO("step " << ids[i]);
      CHECK(steps[i].at("shape") == expected[i].at("shape"));
      if (expected[i].contains("data_haswell")) CHECK(expected[i].at("data_haswell") != expected[i].at("data"));
      std::vector<double> got, want;
      flatten(steps[i].at("data"), got);
      flatten(expected_data(expected[i]), want);
      REQUIRE(got.size() == want.size());
      std::size_t bad = 0;
      std::size_t inexact = 0;
      for (std::size_t k = 0; k < got.size(); ++k) {
        bad += close(got[k], want[k]) ? 0 : 1;
        inexact += same_float(got[k], want[k]) ? 0 : 1;
      }
      CHECK(bad == 0);
      if (bit_exact) CHECK(inexact == 0);
    }
  }
}

// --step computes only what the steps asked for need (docs/architecture.md, "Steps computed on demand"):
// each step asked for alone must still be PyTorch's, dropout masks included, which holds only if every
// step's dependencies, and the order of the random draws, are right.
TEST_CASE("each step asked for alone with --step is the same tensor as in the full run", "[golden][step]") {
  std::ifstream in(ATTN_TESTS_DIR "/golden/lessons.json");
  REQUIRE(in.good());
  const json golden = json::parse(in);
  std::size_t checked = 0;
  for (const auto& c : golden.at("cases")) {
    std::vector<std::string> args{c.at("lesson").get<std::string>(), "--json"};
    for (const auto& a : c.at("args")) {
      std::string arg = a;
      if (arg.rfind("inputs/", 0) == 0 || arg.rfind("models/", 0) == 0) arg = ATTN_TESTS_DIR "/golden/" + arg;
      args.push_back(arg);
    }
    const std::size_t tokens = json::parse(attn_test::run(args).out).at("inputs").at("tokens").size();
    const bool bit_exact = tokens < 8 && !uses_model(c);
    for (const auto& expected : c.at("steps")) {
      const std::string id = expected.at("id");
      std::vector<std::string> one = args;
      one.push_back("--step");
      one.push_back(id);
      INFO("attn " << c.at("lesson").get<std::string>() << " " << c.at("args").dump() << " --step " << id
                   << " (OpenBLAS core " << blas_core() << ")");
      const attn_test::Run r = attn_test::run(one);
      REQUIRE(r.status == 0);
      const json doc = json::parse(r.out);
      REQUIRE(doc.at("steps").size() == 1);
      const json& step = doc.at("steps")[0];
      CHECK(step.at("id") == id);
      CHECK(step.at("shape") == expected.at("shape"));
      std::vector<double> got, want;
      flatten(step.at("data"), got);
      flatten(expected_data(expected), want);
      REQUIRE(got.size() == want.size());
      std::size_t bad = 0;
      for (std::size_t k = 0; k < got.size(); ++k)
        bad += (bit_exact ? same_float(got[k], want[k]) : close(got[k], want[k])) ? 0 : 1;
      CHECK(bad == 0);
      ++checked;
    }
  }
  CHECK(checked > 4100);  // every step of 180 configurations: 62 at numeric extremes, 11 from --text, 12 --model
}

// The numeric-extreme configurations in the book's view too: every lesson prints its NaN and infinities
// (the print format itself is checked against PyTorch's on these tensors in test_torch_print.cpp), with
// heatmaps, and never stops with an internal error.
TEST_CASE("numeric extremes print in the text view, heatmaps included, and exit 0", "[golden]") {
  std::ifstream in(ATTN_TESTS_DIR "/golden/lessons.json");
  REQUIRE(in.good());
  const json golden = json::parse(in);
  std::size_t extremes = 0, with_nan = 0;
  for (const auto& c : golden.at("cases")) {
    std::vector<std::string> args{c.at("lesson").get<std::string>(), "--heatmap", "always"};
    bool extreme = false;
    for (const auto& a : c.at("args")) {
      std::string arg = a;
      extreme = extreme || arg.rfind("inputs/ext_", 0) == 0;
      if (arg.rfind("inputs/", 0) == 0 || arg.rfind("models/", 0) == 0) arg = ATTN_TESTS_DIR "/golden/" + arg;
      args.push_back(arg);
    }
    if (!extreme) continue;
    INFO("attn " << c.at("lesson").get<std::string>() << " " << c.at("args").dump() << " (OpenBLAS core " << blas_core()
                 << ")");
    const attn_test::Run r = attn_test::run(args);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("-nan") == std::string::npos);  // Python never prints a NaN's sign
    // In colour too: a cell off the scale (nan, inf) is shown uncoloured (the sanitizer build found a NaN
    // turned into a palette index, found first by the fuzzer).
    args.insert(args.end(), {"--color", "always"});
    const attn_test::Run coloured = attn_test::run(args);
    CHECK(coloured.status == 0);
    CHECK(coloured.out.find("\x1b[") != std::string::npos);  // the heatmaps are painted
    ++extremes;
    with_nan += r.out.find("nan") != std::string::npos ? 1 : 0;
  }
  CHECK(extremes >= 50);
  CHECK(with_nan >= 30);
}
