// attn against PyTorch for many seeds, shapes and inputs: tests/golden/lessons/ holds every step of every
// configuration as computed by the book's own code in PyTorch (tests/golden/generate.py), one file per
// configuration, and each configuration is a test case of its own (two: the whole run, and each step
// asked for alone, the latter split in two with --model), registered from tests/golden/lessons/index.json
// when the program starts. A failure names its configuration, and ctest -j spreads them over the cores.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <stdexcept>

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
// the steps where that changes a last bit, tests/golden/lessons/ also holds PyTorch's values on Haswell's kernels
// ("data_haswell", tests/golden/blas_variants.py). attn is held to the values of the kernels it runs on.
using attn_test::blas_core;

const json& expected_data(const json& step) {
  static const bool haswell = attn_test::haswell_kernels();
  const auto variant = step.find("data_haswell");
  return haswell && variant != step.end() ? *variant : step.at("data");
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

namespace {

// One golden configuration: its file under tests/golden/lessons and its command line.
struct Configuration {
  std::string file;
  std::string lesson;
  std::vector<std::string> args;  // as attn takes them: inputs/ and models/ paths made absolute
  std::string shown;              // the command as the index has it (paths under tests/golden), for names
  std::string command() const { return shown; }
};

// An argument as a shell would take it, for a test name: in single quotes when it holds a space, in
// double quotes when it holds a single quote (a backslash would be an escape in Catch2's test spec).
std::string shell_word(const std::string& a) {
  if (a.find('\'') != std::string::npos) return "\"" + a + "\"";
  return a.find(' ') == std::string::npos ? a : "'" + a + "'";
}

std::vector<Configuration> read_configurations() {
  std::ifstream in(ATTN_TESTS_DIR "/golden/lessons/index.json");
  if (!in.good()) throw std::runtime_error("cannot read tests/golden/lessons/index.json");
  const json index = json::parse(in);
  std::vector<Configuration> out;
  for (const auto& c : index.at("cases")) {
    Configuration conf{c.at("file"), c.at("lesson"), {}, "attn " + c.at("lesson").get<std::string>()};
    for (const auto& a : c.at("args")) {
      std::string arg = a;
      conf.shown += " " + shell_word(arg);
      if (arg.rfind("inputs/", 0) == 0 || arg.rfind("models/", 0) == 0) arg = ATTN_TESTS_DIR "/golden/" + arg;
      conf.args.push_back(arg);
    }
    out.push_back(conf);
  }
  return out;
}
const std::vector<Configuration>& configurations() {
  static const std::vector<Configuration> all = read_configurations();
  return all;
}

json read_expected(const Configuration& c) {
  std::ifstream in(ATTN_TESTS_DIR "/golden/lessons/" + c.file);
  REQUIRE(in.good());
  return json::parse(in);
}

bool uses_model(const Configuration& c) {
  return std::find(c.args.begin(), c.args.end(), "--model") != c.args.end();
}

// Every step of one configuration within 1e-5 of PyTorch, and bit for bit without --model.
void check_whole_run(const Configuration& c) {
  const json expected_doc = read_expected(c);
  std::vector<std::string> args{c.lesson, "--json"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  INFO(c.command() << " (OpenBLAS core " << blas_core() << ")");
  const attn_test::Run r = attn_test::run(args);
  REQUIRE(r.status == 0);
  const json doc = json::parse(r.out);
  const auto& steps = doc.at("steps");
  const auto& expected = expected_doc.at("steps");
  // The same steps in the same order, none missing and none extra.
  std::vector<std::string> ids, expected_ids;
  for (const auto& s : steps) ids.push_back(s.at("id"));
  for (const auto& s : expected) expected_ids.push_back(s.at("id"));
  REQUIRE(ids == expected_ids);
  // attn adds sums and softmax in the order of PyTorch's kernels (docs/architecture.md, "Arithmetic, to the
  // bit"), so every configuration must match PyTorch to the bit, on the kernels its data were computed with.
  // The --model configurations' data come from one OpenBLAS kernel family each, with no variant for the
  // other (blas_variants.py recomputes only those without a model), so they are held to 1e-5 here; the
  // notebooks' record holds --model runs to PyTorch's printed digits under both families (test_notebook.cpp).
  const bool bit_exact = !uses_model(c);
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

// Which of a configuration's steps one "each step alone" case asks for. A run with --model reads the
// model's tokenizer files again for every step (about 0.1 s each, 15 configurations of up to 44 steps), so
// the quick tier asks for a stable sample of those steps and the `steps` tier for the rest: together every
// step of every configuration, each once. The sample is every 8th step, starting at an offset that moves
// with the configuration's number (so that the configurations of one lesson sample different steps), and
// the last step.
enum class StepPart { all, sample, rest };

bool in_sample(std::size_t configuration, std::size_t step, std::size_t steps) {
  return step + 1 == steps || step % 8 == configuration % 8;
}

// --step computes only what the steps asked for need (docs/architecture.md, "Steps computed on demand"):
// each step asked for alone must still be PyTorch's, dropout masks included, which holds only if every
// step's dependencies, and the order of the random draws, are right.
void check_each_step_alone(std::size_t number, StepPart part) {
  const Configuration& c = configurations().at(number);
  const json expected_doc = read_expected(c);
  std::vector<std::string> args{c.lesson, "--json"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  const bool bit_exact = !uses_model(c);
  std::size_t checked = 0;
  const json& all_steps = expected_doc.at("steps");
  for (std::size_t i = 0; i < all_steps.size(); ++i) {
    if (part != StepPart::all && in_sample(number, i, all_steps.size()) != (part == StepPart::sample)) continue;
    const json& expected = all_steps[i];
    const std::string id = expected.at("id");
    std::vector<std::string> one = args;
    one.push_back("--step");
    one.push_back(id);
    INFO(c.command() << " --step " << id << " (OpenBLAS core " << blas_core() << ")");
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
  CHECK(checked >= 1);
}

// Registers two cases per configuration when the program starts, named by the configuration's number
// and command line: "golden 017: attn causal --seed 7" and "golden 017, each step alone: ..." (with
// --model, "golden 176, each step alone, a sample: ..." and "..., the rest: ...", in two tiers). The
// whole runs' last bits depend on the kernels OpenBLAS runs: test_kernels.cpp reruns them under each
// kernel family the CPU can run.
const bool registered_configurations = [] {
  attn_test::register_cases_from("tests/golden/lessons/index.json", [] {
    const auto& all = configurations();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const std::string n = std::to_string(i), number = std::string(n.size() < 3 ? 3 - n.size() : 0, '0') + n;
      attn_test::register_case("golden " + number + ": " + all[i].command(), "[golden]",
                               [i] { check_whole_run(configurations().at(i)); });
      if (!uses_model(all[i])) {
        attn_test::register_case("golden " + number + ", each step alone: " + all[i].command(), "[golden][step]",
                                 [i] { check_each_step_alone(i, StepPart::all); });
      } else {
        attn_test::register_case("golden " + number + ", each step alone, a sample: " + all[i].command(), "[golden][step]",
                                 [i] { check_each_step_alone(i, StepPart::sample); });
        attn_test::register_case("golden " + number + ", each step alone, the rest: " + all[i].command(),
                                 "[golden][step][steps]", [i] { check_each_step_alone(i, StepPart::rest); });
      }
    }
  });
  return true;
}();

}  // namespace

TEST_CASE("the golden configurations: every lesson, 185 of them, each a test case of its own", "[golden]") {
  const auto& all = configurations();
  CHECK(all.size() >= 185);  // 62 at numeric extremes, 11 from --text, 12 --model, 5 of attn heads (3 --model)
  std::set<std::string> lessons, commands;
  for (const auto& c : all) {
    lessons.insert(c.lesson);
    commands.insert(c.command());
  }
  CHECK(commands.size() == all.size());  // no configuration twice
  for (const auto& name : attn_test::lesson_names()) {
    INFO("a lesson with no golden configuration: " << name);
    CHECK(lessons.count(name) == 1);
  }
  // Every case of every configuration is registered (the names the ctest entries run by): the whole run
  // and each step alone, the latter in two parts (a sample, the rest) with --model.
  const auto with_model = static_cast<std::size_t>(std::count_if(all.begin(), all.end(), uses_model));
  CHECK(with_model >= 15);
  std::size_t registered = 0;
  for (const auto& t : Catch::getAllTestCasesSorted(*Catch::getCurrentContext().getConfig()))
    registered += t.name.rfind("golden ", 0) == 0 ? 1 : 0;
  CHECK(registered == 2 * all.size() + with_model);
}

// The numeric-extreme configurations in the book's view too: every lesson prints its NaN and infinities
// (the print format itself is checked against PyTorch's on these tensors in test_torch_print.cpp), with
// heatmaps, and never stops with an internal error.
TEST_CASE("numeric extremes print in the text view, heatmaps included, and exit 0", "[golden]") {
  std::size_t extremes = 0, with_nan = 0;
  for (const auto& c : configurations()) {
    const bool extreme = std::any_of(c.args.begin(), c.args.end(), [](const std::string& a) {
      return a.rfind(ATTN_TESTS_DIR "/golden/inputs/ext_", 0) == 0;
    });
    if (!extreme) continue;
    std::vector<std::string> args{c.lesson, "--heatmap", "always"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    INFO(c.command() << " (OpenBLAS core " << blas_core() << ")");
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
