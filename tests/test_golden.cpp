// attn against PyTorch for many seeds, shapes and inputs: tests/golden/lessons.json holds every step
// of every configuration as computed by the book's own code in PyTorch (tests/golden/generate.py).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support.hpp"

namespace {

using json = nlohmann::json;

// Flattens nested arrays of numbers and the strings "inf", "-inf", "nan" (docs/json.md).
void flatten(const json& j, std::vector<double>& out) {
  if (j.is_array()) {
    for (const auto& e : j) flatten(e, out);
  } else if (j.is_string()) {
    const std::string s = j;
    out.push_back(s == "nan" ? NAN : (s == "inf" ? INFINITY : -INFINITY));
  } else {
    out.push_back(j.get<double>());
  }
}

bool close(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= 1e-5;
}

// The same float32, bit for bit (both sides were written as float32 values).
bool same_float(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return static_cast<float>(a) == static_cast<float>(b);
}

}  // namespace

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
      if (arg.rfind("inputs/", 0) == 0) arg = ATTN_TESTS_DIR "/golden/" + arg;
      args.push_back(arg);
    }
    INFO("attn " << c.at("lesson").get<std::string>() << " " << c.at("args").dump());
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
    // than 8 tokens, the book's six among them, must match PyTorch to the bit.
    const bool bit_exact = doc.at("inputs").at("tokens").size() < 8;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      INFO("step " << ids[i]);
      CHECK(steps[i].at("shape") == expected[i].at("shape"));
      std::vector<double> got, want;
      flatten(steps[i].at("data"), got);
      flatten(expected[i].at("data"), want);
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
      if (arg.rfind("inputs/", 0) == 0) arg = ATTN_TESTS_DIR "/golden/" + arg;
      args.push_back(arg);
    }
    const std::size_t tokens = json::parse(attn_test::run(args).out).at("inputs").at("tokens").size();
    for (const auto& expected : c.at("steps")) {
      const std::string id = expected.at("id");
      std::vector<std::string> one = args;
      one.push_back("--step");
      one.push_back(id);
      INFO("attn " << c.at("lesson").get<std::string>() << " " << c.at("args").dump() << " --step " << id);
      const attn_test::Run r = attn_test::run(one);
      REQUIRE(r.status == 0);
      const json doc = json::parse(r.out);
      REQUIRE(doc.at("steps").size() == 1);
      const json& step = doc.at("steps")[0];
      CHECK(step.at("id") == id);
      CHECK(step.at("shape") == expected.at("shape"));
      std::vector<double> got, want;
      flatten(step.at("data"), got);
      flatten(expected.at("data"), want);
      REQUIRE(got.size() == want.size());
      std::size_t bad = 0;
      for (std::size_t k = 0; k < got.size(); ++k)
        bad += (tokens < 8 ? same_float(got[k], want[k]) : close(got[k], want[k])) ? 0 : 1;
      CHECK(bad == 0);
      ++checked;
    }
  }
  CHECK(checked > 1000);  // every step of 81 configurations
}
