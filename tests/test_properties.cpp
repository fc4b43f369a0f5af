// Properties every lesson must have on any input, checked over random embeddings, shapes and options
// (a fixed-seed std::mt19937, so a failure is reproducible; INFO names the case): attention weights are
// distributions and dropout only zeroes or rescales them, causal lessons never look ahead, the lessons
// agree where the book says they compute the same thing, and attention without positions is
// permutation-equivariant. test_lessons.cpp and test_modules.cpp check the same ideas on the book's input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>

#include "modules/attention.hpp"
#include "lessons/lessons.hpp"

using namespace attn;

namespace {

using Rng = std::mt19937;

std::size_t pick(Rng& rng, std::size_t lo, std::size_t hi) {
  return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
}
bool coin(Rng& rng, double p = 0.5) { return std::bernoulli_distribution(p)(rng); }

// 1 token now and then, mostly short sequences, sometimes long enough (n * n * head_dim >= 400) for bmm's
// SGEMM path instead of its plain loop.
std::size_t pick_tokens(Rng& rng, std::size_t at_least = 1) {
  const std::size_t r = pick(rng, 0, 9);
  const std::size_t n = r == 0 ? 1 : (r < 8 ? pick(rng, 2, 8) : pick(rng, 9, 24));
  return std::max(n, at_least);
}

// Embeddings like the book's (uniform in [0, 1)) or centred with a random scale.
Inputs random_inputs(Rng& rng, std::size_t n, std::size_t d_in) {
  const std::size_t kind = pick(rng, 0, 3);
  const float scale = kind == 1 ? 0.5f : (kind == 2 ? 1.0f : 2.0f);
  std::uniform_real_distribution<float> dist(kind == 0 ? 0.0f : -scale, kind == 0 ? 1.0f : scale);
  Inputs in;
  in.embeddings = xt::empty<float>({n, d_in});
  for (auto& v : in.embeddings) v = dist(rng);
  for (std::size_t i = 0; i < n; ++i) in.tokens.push_back("t" + std::to_string(i));
  in.source = "random";
  return in;
}

// Options every lesson accepts together: d_out a multiple of heads (head_dim 1 to 4), kv_groups a
// divisor of heads, any dropout from 0 to 1, a seed (none, small, or past 2^32), a query.
LessonConfig random_config(Rng& rng, std::size_t n) {
  LessonConfig c;
  c.heads = pick(rng, 1, 4);
  c.d_out = c.heads * pick(rng, 1, 4);
  std::vector<std::size_t> divisors;
  for (std::size_t g = 1; g <= c.heads; ++g)
    if (c.heads % g == 0) divisors.push_back(g);
  c.kv_groups = divisors[pick(rng, 0, divisors.size() - 1)];
  const double ps[] = {0.0, 0.0, 0.0, 0.1, 0.3, 0.5, 0.8, 1.0};
  c.dropout = ps[pick(rng, 0, 7)];
  c.dropout_rng = coin(rng) ? DropoutRng::Default : DropoutRng::Mkl;
  const std::size_t s = pick(rng, 0, 2);
  if (s == 1) c.seed = pick(rng, 0, 1000);
  if (s == 2) c.seed = (std::uint64_t{rng()} << 32) | rng();
  c.qkv_bias = coin(rng);
  c.batch = pick(rng, 1, 3);
  c.query = static_cast<std::int64_t>(pick(rng, 0, n - 1));
  return c;
}

std::string describe(const Inputs& in, const LessonConfig& c) {
  std::ostringstream s;
  s << "n=" << in.num_tokens() << " d_in=" << in.d_in() << " d_out=" << c.d_out << " heads=" << c.heads
    << " kv_groups=" << c.kv_groups << " dropout=" << c.dropout << " rng=" << to_string(c.dropout_rng)
    << " seed=" << (c.seed ? std::to_string(*c.seed) : "book") << " qkv_bias=" << c.qkv_bias << " batch=" << c.batch
    << " query=" << (c.query ? std::to_string(*c.query) : "-");
  return s.str();
}

const AnyTensor& tensor(const Trace& t, const std::string& id) {
  INFO(t.info.name << " step " << id);
  REQUIRE(t.has_step(id));
  const Step& s = t.step(id);
  REQUIRE(s.computed);
  return s.tensor;
}

std::vector<std::size_t> shape_of(const AnyTensor& x) { return {x.shape().begin(), x.shape().end()}; }
std::string shape_text(const AnyTensor& x) {
  std::string s = "(";
  for (std::size_t i = 0; i < x.dimension(); ++i) s += (i ? ", " : "") + std::to_string(x.shape()[i]);
  return s + ")";
}

// Calls f(flat, index) for every element of a row-major tensor of this shape.
template <class F>
void for_each_index(const std::vector<std::size_t>& shape, F f) {
  std::size_t total = 1;
  for (std::size_t s : shape) total *= s;
  std::vector<std::size_t> idx(shape.size(), 0);
  for (std::size_t flat = 0; flat < total; ++flat) {
    f(flat, idx);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(const AnyTensor& a, const AnyTensor& b) {
  return a.shape() == b.shape() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) { return same_bits(x, y); });
}

// |a - b| relative to the larger magnitude, or absolute below 1.
double rel_diff(double a, double b) { return std::fabs(a - b) / std::max({1.0, std::fabs(a), std::fabs(b)}); }
double max_rel_diff(const AnyTensor& a, const AnyTensor& b) {
  REQUIRE(shape_of(a) == shape_of(b));
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = rel_diff(a.data()[i], b.data()[i]);
    if (!(d <= worst)) worst = d;  // NaN wins
  }
  return worst;
}
constexpr double kTol = 2e-5;  // float32 results of the same sums in another order

// Every row along the last dimension is a probability distribution: entries in [0, 1], summing (in
// double) to 1 within a float32 tolerance that grows with the row's length.
void check_distributions(const AnyTensor& w, const std::string& what) {
  INFO(what << " " << shape_text(w));
  REQUIRE(w.dimension() >= 1);
  const std::size_t n = w.shape().back();
  REQUIRE(n > 0);
  const double tol = 1e-6 * static_cast<double>(n + 1);
  std::size_t bad_rows = 0, out_of_range = 0;
  std::ostringstream first;
  for (std::size_t r = 0; r < w.size() / n; ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < n; ++c) {
      const float v = w.data()[r * n + c];
      if (!(v >= 0.0f && v <= 1.0f)) ++out_of_range;
      sum += v;
    }
    if (!(std::fabs(sum - 1.0) <= tol) && bad_rows++ == 0) first << "row " << r << " sums to " << sum;
  }
  INFO(first.str());
  CHECK(bad_rows == 0);
  CHECK(out_of_range == 0);
}

// Over the last two dimensions (n, n): every entry above the diagonal is exactly `value`.
void check_above_diagonal(const AnyTensor& w, float value, const std::string& what) {
  INFO(what << " " << shape_text(w));
  REQUIRE(w.dimension() >= 2);
  const std::size_t n = w.shape().back();
  REQUIRE(w.shape()[w.dimension() - 2] == n);
  std::size_t bad = 0;
  for (std::size_t r = 0; r < w.size() / n; ++r)
    for (std::size_t j = r % n + 1; j < n; ++j) bad += !(w.data()[r * n + j] == value);
  CHECK(bad == 0);
}

struct DropoutTally {
  std::size_t kept = 0, dropped = 0;
};

// `after` is `before` through nn.Dropout(p) in training mode: each entry is 0 (dropped) or the entry
// times 1 / float(1 - p), PyTorch's scaling, to the bit; p = 0 changes nothing.
void check_dropout_scaling(const AnyTensor& before, const AnyTensor& after, double p, const std::string& what,
                           DropoutTally& tally) {
  INFO(what << " p=" << p);
  REQUIRE(shape_of(before) == shape_of(after));
  if (p == 0.0) {
    CHECK(same_bits(before, after));
    return;
  }
  const float keep = 1.0f / static_cast<float>(1.0 - p);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < after.size(); ++i) {
    const float b = before.data()[i], a = after.data()[i];
    if (a == 0.0f) {
      tally.dropped += b != 0.0f;
    } else {
      bad += !(a == b * keep);
      ++tally.kept;
    }
  }
  CHECK(bad == 0);  // at p = 1 the scale is inf, so only 0 passes
}

// The edge shapes and options the random cases must include, counted so a change of the generator
// cannot quietly drop them.
struct EdgeTally {
  std::size_t one_token = 0, one_dim = 0, head_dim_1 = 0, long_head_dim_1 = 0, dropout_1 = 0, dropout_mid = 0,
              big_seed = 0;
  void count(const Inputs& in, const LessonConfig& c) {
    const std::size_t n = in.num_tokens(), hd = c.d_out / c.heads;
    one_token += n == 1;
    one_dim += in.d_in() == 1;
    head_dim_1 += hd == 1;
    long_head_dim_1 += hd == 1 && n * n >= 400;  // bmm's SGEMM path with nothing to sum
    dropout_1 += c.dropout == 1.0;
    dropout_mid += c.dropout > 0.0 && c.dropout < 1.0;
    big_seed += c.seed && *c.seed > 0xffffffffu;
  }
  void check() const {
    CHECK(one_token > 0);
    CHECK(one_dim > 0);
    CHECK(head_dim_1 > 0);
    CHECK(long_head_dim_1 > 0);
    CHECK(dropout_1 > 0);
    CHECK(dropout_mid > 0);
    CHECK(big_seed > 0);
  }
};

}  // namespace

TEST_CASE("properties: every softmax step is a distribution, causal weights are 0 above the diagonal, dropout only zeroes or scales by 1/(1-p)",
          "[properties]") {
  Rng rng(20240601);
  constexpr std::size_t kCases = 200;
  DropoutTally tally;
  EdgeTally edges;
  std::size_t ran = 0;
  for (std::size_t i = 0; i < kCases; ++i) {
    const std::size_t n = pick_tokens(rng), d_in = pick(rng, 1, 16);
    const Inputs in = random_inputs(rng, n, d_in);
    const LessonConfig c = random_config(rng, n);
    INFO("case " << i << ": " << describe(in, c));
    edges.count(in, c);
    LessonConfig no_dropout = c;
    no_dropout.dropout = 0.0;

    const Trace simple = run_simple(in, c);
    check_distributions(tensor(simple, "attn_weights_2"), "simple attn_weights_2");
    check_distributions(tensor(simple, "attn_weights_2_naive"), "simple attn_weights_2_naive");
    CHECK(std::fabs(tensor(simple, "attn_weights_2_sum")() - 1.0f) <= 1e-6f * (n + 1));
    CHECK(std::fabs(tensor(simple, "attn_weights_2_naive_sum")() - 1.0f) <= 1e-6f * (n + 1));

    const Trace all = run_all_tokens(in, c);
    check_distributions(tensor(all, "attn_weights"), "all-tokens attn_weights");
    for (float s : tensor(all, "all_row_sums")) CHECK(std::fabs(s - 1.0f) <= 1e-6f * (n + 1));
    // The book's row as printed, to four decimals: each rounding is off by at most 0.00005.
    CHECK(std::fabs(tensor(all, "row_2_sum")() - 1.0) <= 0.00005 * n + 1e-6);

    check_distributions(tensor(run_trainable(in, c), "attn_weights_2"), "trainable attn_weights_2");

    const Trace causal = run_causal(in, c);
    for (const char* id : {"attn_weights", "causal_attn_weights", "masked_simple_norm"})
      check_distributions(tensor(causal, id), std::string("causal ") + id);
    for (const char* id : {"masked_simple", "masked_simple_norm", "causal_attn_weights", "ca_attn_weights"})
      check_above_diagonal(tensor(causal, id), 0.0f, std::string("causal ") + id);
    check_above_diagonal(tensor(causal, "masked"), -INFINITY, "causal masked");
    const Trace causal_0 = run_causal(in, no_dropout);
    check_distributions(tensor(causal_0, "ca_attn_weights"), "causal ca_attn_weights, p = 0");
    check_dropout_scaling(tensor(causal_0, "ca_attn_weights"), tensor(causal, "ca_attn_weights"), c.dropout,
                          "causal ca_attn_weights", tally);

    const Trace drop = run_dropout(in, c);
    check_distributions(tensor(drop, "causal_attn_weights"), "dropout causal_attn_weights");
    check_above_diagonal(tensor(drop, "causal_attn_weights"), 0.0f, "dropout causal_attn_weights");
    check_above_diagonal(tensor(drop, "dropout_attn_weights"), 0.0f, "dropout dropout_attn_weights");
    check_dropout_scaling(tensor(drop, "causal_attn_weights"), tensor(drop, "dropout_attn_weights"), c.dropout,
                          "dropout dropout_attn_weights", tally);
    {
      // Reseeded, the weights lose exactly the positions the matrix of ones lost: the ones' dropout is
      // the mask itself, 0 or 1/(1-p).
      const AnyTensor& ones = tensor(drop, "dropout_ones");
      DropoutTally unused;
      check_dropout_scaling(AnyTensor(xt::ones<float>(ones.shape())), ones, c.dropout, "dropout dropout_ones", unused);
      const AnyTensor expected = tensor(drop, "causal_attn_weights") * ones;
      CHECK(same_bits(expected, tensor(drop, "dropout_attn_weights")));
    }

    const Trace wrapper = run_mha_wrapper(in, c), wrapper_0 = run_mha_wrapper(in, no_dropout);
    for (std::size_t h = 0; h < c.heads; ++h) {
      const std::string id = "head_" + std::to_string(h) + "_attn_weights";
      check_above_diagonal(tensor(wrapper, id), 0.0f, "mha-wrapper " + id);
      check_distributions(tensor(wrapper_0, id), "mha-wrapper " + id + ", p = 0");
      check_dropout_scaling(tensor(wrapper_0, id), tensor(wrapper, id), c.dropout, "mha-wrapper " + id, tally);
    }

    for (const Trace& t : {run_mha(in, c), run_gqa(in, c)}) {
      const std::string name = t.info.name;
      check_distributions(tensor(t, "attn_weights"), name + " attn_weights");
      check_above_diagonal(tensor(t, "attn_weights"), 0.0f, name + " attn_weights");
      check_above_diagonal(tensor(t, "attn_weights_dropout"), 0.0f, name + " attn_weights_dropout");
      check_above_diagonal(tensor(t, "masked"), -INFINITY, name + " masked");
      check_dropout_scaling(tensor(t, "attn_weights"), tensor(t, "attn_weights_dropout"), c.dropout,
                            name + " attn_weights_dropout", tally);
    }
    ++ran;
  }
  CHECK(ran == kCases);
  edges.check();
  // The dropout checks saw both kinds of entry, so neither branch of the check was idle.
  CHECK(tally.kept > 0);
  CHECK(tally.dropped > 0);
}

namespace {

// What changing token k (and possibly the tokens after it) may do to a step of a causal lesson.
enum class Kind {
  Whole,       // nothing: parameters, constants, masks
  Rows,        // elements whose token index on `axis` is < k stay the same, bit for bit
  Block,       // elements whose indices on both `axis` and `axis2` are < k (query x key before masking)
  CloseRows,   // rows < k stay the same within float tolerance (the same numbers summed in another order)
  SeesFuture,  // not causal: rows < k depend on later tokens (unmasked softmax and what is made from it)
};
struct Rule {
  Kind kind;
  std::size_t axis = 0, axis2 = 0;
};

// The rule for every step of the causal lessons, from what each step holds; a step that is in none of
// these lists fails the test, so a new step cannot go unchecked.
std::optional<Rule> causal_rule(const std::string& lesson, const std::string& id) {
  if (id == "num_params" || id.find(".weight") != std::string::npos || id.find(".bias") != std::string::npos)
    return Rule{Kind::Whole};
  if (id == "batch") return Rule{Kind::Rows, 1};  // (b, n, d_in)
  static const std::map<std::string, std::map<std::string, Rule>> rules = {
      {"causal",
       {{"queries", {Kind::Rows, 0}},
        {"keys", {Kind::Rows, 0}},
        {"attn_scores", {Kind::Block, 0, 1}},
        {"attn_weights", {Kind::SeesFuture, 0}},
        {"mask_simple", {Kind::Whole}},
        {"masked_simple", {Kind::SeesFuture, 0}},  // unmasked weights, zeroed: the normaliser saw the future
        {"row_sums", {Kind::SeesFuture, 0}},
        {"masked_simple_norm", {Kind::CloseRows, 0}},  // renormalised: causal again, up to rounding
        {"mask", {Kind::Whole}},
        {"masked", {Kind::Rows, 0}},
        {"causal_attn_weights", {Kind::Rows, 0}},
        {"ca_attn_weights", {Kind::Rows, 1}},
        {"context_vecs", {Kind::Rows, 1}}}},
      {"dropout",
       {{"causal_attn_weights", {Kind::Rows, 0}},
        {"dropout_ones", {Kind::Whole}},
        {"dropout_attn_weights", {Kind::Rows, 0}}}},
      {"mha-wrapper", {{"context_vecs", {Kind::Rows, 1}}}},  // and head_<h>_... below
      {"mha",
       {{"W_query_heads", {Kind::Whole}},
        {"queries", {Kind::Rows, 1}},
        {"keys", {Kind::Rows, 1}},
        {"values", {Kind::Rows, 1}},
        {"queries_view", {Kind::Rows, 1}},
        {"keys_view", {Kind::Rows, 1}},
        {"values_view", {Kind::Rows, 1}},
        {"queries_heads", {Kind::Rows, 2}},
        {"keys_heads", {Kind::Rows, 2}},
        {"values_heads", {Kind::Rows, 2}},
        {"a", {Kind::Whole}},
        {"a_matmul", {Kind::Whole}},
        {"first_res", {Kind::Whole}},
        {"second_res", {Kind::Whole}},
        {"attn_scores", {Kind::Block, 2, 3}},
        {"einsum_query", {Kind::Rows, 0}},
        {"einsum_key", {Kind::Rows, 0}},
        {"einsum_scores", {Kind::Block, 0, 1}},
        {"einsum_scores_permuted", {Kind::Block, 2, 3}},
        {"einsum_max_diff", {Kind::Whole}},  // 0 whatever the input
        {"masked", {Kind::Rows, 2}},
        {"attn_weights", {Kind::Rows, 2}},
        {"attn_weights_dropout", {Kind::Rows, 2}},
        {"context_vec_heads", {Kind::Rows, 1}},
        {"context_vec", {Kind::Rows, 1}},
        {"context_vecs", {Kind::Rows, 1}}}},
      {"gqa",
       {{"queries", {Kind::Rows, 2}},
        {"keys", {Kind::Rows, 2}},
        {"values", {Kind::Rows, 2}},
        {"keys_repeated", {Kind::Rows, 2}},
        {"values_repeated", {Kind::Rows, 2}},
        {"kv_group_of_head", {Kind::Whole}},
        {"attn_scores", {Kind::Block, 2, 3}},
        {"masked", {Kind::Rows, 2}},
        {"attn_weights", {Kind::Rows, 2}},
        {"attn_weights_dropout", {Kind::Rows, 2}},
        {"context_vec", {Kind::Rows, 1}},
        {"context_vecs", {Kind::Rows, 1}}}},
  };
  if (lesson == "mha-wrapper" && id.rfind("head_", 0) == 0 &&
      (id.find("_attn_weights") != std::string::npos || id.find("_context_vec") != std::string::npos))
    return Rule{Kind::Rows, 1};  // head_<h>_attn_weights (b, n, n), head_<h>_context_vec (b, n, d_out)
  const auto l = rules.find(lesson);
  if (l == rules.end()) return std::nullopt;
  const auto r = l->second.find(id);
  if (r == l->second.end()) return std::nullopt;
  return r->second;
}

struct CausalTally {
  std::size_t compared = 0;      // elements of tokens < k compared
  std::size_t later_changed = 0;  // elements of tokens >= k that did change (the input change reached the step)
  std::size_t sees_future = 0;    // non-causal steps whose rows < k changed
};

// Step `a` (original input) against `b` (token k and maybe later ones changed) under the step's rule.
void check_causal_step(const std::string& lesson, const Step& a, const Step& b, std::size_t n, std::size_t k,
                       CausalTally& tally) {
  INFO(lesson << " step " << a.id << " " << shape_text(a.tensor) << ", tokens from " << k << " changed");
  const std::optional<Rule> rule = causal_rule(lesson, a.id);
  if (!rule) FAIL("no causality rule for " << lesson << "'s step " << a.id << ": add one to causal_rule");
  REQUIRE(a.id == b.id);
  const std::vector<std::size_t> shape = shape_of(a.tensor);
  REQUIRE(shape == shape_of(b.tensor));
  if (rule->kind == Kind::Whole) {
    CHECK(same_bits(a.tensor, b.tensor));
    return;
  }
  REQUIRE(rule->axis < shape.size());
  REQUIRE(shape[rule->axis] == n);
  if (rule->kind == Kind::Block) REQUIRE(shape[rule->axis2] == n);
  std::size_t earlier = 0, mismatched = 0, changed_later = 0;
  std::ostringstream first;
  for_each_index(shape, [&](std::size_t flat, const std::vector<std::size_t>& idx) {
    const bool before_k = idx[rule->axis] < k && (rule->kind != Kind::Block || idx[rule->axis2] < k);
    const float x = a.tensor.data()[flat], y = b.tensor.data()[flat];
    if (!before_k) {
      changed_later += !same_bits(x, y);
      return;
    }
    ++earlier;
    const bool same = rule->kind == Kind::CloseRows ? rel_diff(x, y) <= kTol : same_bits(x, y);
    if (!same && mismatched++ == 0) first << "element " << flat << ": " << x << " became " << y;
  });
  INFO(first.str());
  REQUIRE(earlier > 0);
  tally.compared += earlier;
  tally.later_changed += changed_later;
  if (rule->kind == Kind::SeesFuture) {
    tally.sees_future += mismatched > 0;
  } else {
    CHECK(mismatched == 0);
  }
}

}  // namespace

TEST_CASE("properties: changing a later token leaves every step's rows of earlier tokens unchanged, bit for bit",
          "[properties]") {
  Rng rng(7031);
  constexpr std::size_t kCases = 150;
  std::map<std::string, CausalTally> tallies;
  std::size_t see_future_steps = 0;
  for (std::size_t i = 0; i < kCases; ++i) {
    const std::size_t n = pick_tokens(rng, 2), d_in = pick(rng, 1, 16);
    const Inputs in = random_inputs(rng, n, d_in);
    const LessonConfig c = random_config(rng, n);
    // Token k changes, and in half the cases every token after it too.
    const std::size_t k = pick(rng, 1, n - 1), last = coin(rng) ? n - 1 : k;
    Inputs changed = in;
    for (std::size_t t = k; t <= last; ++t)
      for (std::size_t d = 0; d < d_in; ++d) changed.embeddings(t, d) = 0.5f - 3.0f * in.embeddings(t, d);
    INFO("case " << i << ": " << describe(in, c) << "; tokens " << k << ".." << last << " changed");
    for (const auto run : {run_causal, run_dropout, run_mha_wrapper, run_mha, run_gqa}) {
      const Trace a = run(in, c, {}), b = run(changed, c, {});
      REQUIRE(a.steps.size() == b.steps.size());
      CausalTally& tally = tallies[a.info.name];
      for (std::size_t s = 0; s < a.steps.size(); ++s) {
        check_causal_step(a.info.name, a.steps[s], b.steps[s], n, k, tally);
        see_future_steps += causal_rule(a.info.name, a.steps[s].id).value_or(Rule{Kind::Whole}).kind == Kind::SeesFuture;
      }
    }
  }
  REQUIRE(tallies.size() == 5);
  for (const auto& [lesson, tally] : tallies) {
    INFO(lesson);
    CHECK(tally.compared > 0);
    // The change reached the later tokens' rows, so equal earlier rows are not equal by accident.
    CHECK(tally.later_changed > 0);
  }
  // The unmasked steps of `causal` do change in earlier rows, every time: the comparison can tell.
  CHECK(see_future_steps == 3 * kCases);
  CHECK(tallies["causal"].sees_future == 3 * kCases);
}

namespace {

// Row q of a matrix, x[q, :], as its own tensor.
AnyTensor row(const AnyTensor& x, std::size_t q) {
  REQUIRE(x.dimension() == 2);
  REQUIRE(q < x.shape()[0]);
  return xt::view(x, q, xt::all());
}

// For every element of `x` (b, ..., n, n): whether it lies on or below the diagonal of its (n, n) matrix.
bool on_or_below_diagonal(const std::vector<std::size_t>& idx) { return idx[idx.size() - 1] <= idx[idx.size() - 2]; }

// `masked` is `scores` with -inf above the diagonal and the very same numbers elsewhere.
void check_masked_fill(const AnyTensor& scores, const AnyTensor& masked, const std::string& what) {
  INFO(what);
  REQUIRE(shape_of(scores) == shape_of(masked));
  std::size_t bad = 0;
  for_each_index(shape_of(scores), [&](std::size_t flat, const std::vector<std::size_t>& idx) {
    const float s = scores.data()[flat], m = masked.data()[flat];
    bad += on_or_below_diagonal(idx) ? !same_bits(s, m) : !(m == -INFINITY);
  });
  CHECK(bad == 0);
}

// The heads of a (b, n, heads * hd) tensor are `split` (b, heads, n, hd) when split(b, h, t, d) is
// whole(b, t, h * hd + d), bit for bit; `token_major` gives split as (b, n, heads, hd) instead.
void check_head_split(const AnyTensor& whole, const AnyTensor& split, bool token_major, const std::string& what) {
  INFO(what << " " << shape_text(whole) << " vs " << shape_text(split));
  REQUIRE(whole.dimension() == 3);
  REQUIRE(split.dimension() == 4);
  const std::size_t hd = split.shape()[3];
  REQUIRE(whole.size() == split.size());
  std::size_t bad = 0;
  for_each_index(shape_of(split), [&](std::size_t flat, const std::vector<std::size_t>& i) {
    const std::size_t t = token_major ? i[1] : i[2], h = token_major ? i[2] : i[1];
    bad += !same_bits(split.data()[flat], whole(i[0], t, h * hd + i[3]));
  });
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("properties: the lessons agree with each other where the book says they compute the same numbers",
          "[properties]") {
  Rng rng(314159);
  constexpr std::size_t kCases = 200;
  std::size_t seeded = 0, one_head = 0, head_0_compared = 0, biased = 0;
  EdgeTally edges;
  for (std::size_t i = 0; i < kCases; ++i) {
    const std::size_t n = pick_tokens(rng), d_in = pick(rng, 1, 16);
    const Inputs in = random_inputs(rng, n, d_in);
    const LessonConfig c = random_config(rng, n);
    const std::size_t q = static_cast<std::size_t>(*c.query);
    INFO("case " << i << ": " << describe(in, c));
    edges.count(in, c);

    // 3.3.1 and 3.3.2: the query's scores, weights and context vector are row q of all-tokens' matrices.
    const Trace simple = run_simple(in, c), all = run_all_tokens(in, c);
    CHECK(max_rel_diff(tensor(simple, "attn_scores_2"), row(tensor(all, "attn_scores"), q)) <= kTol);
    CHECK(max_rel_diff(tensor(simple, "attn_weights_2"), row(tensor(all, "attn_weights"), q)) <= kTol);
    CHECK(max_rel_diff(tensor(simple, "context_vec_2"), row(tensor(all, "all_context_vecs"), q)) <= kTol);
    CHECK(max_rel_diff(tensor(all, "attn_scores_loop"), tensor(all, "attn_scores")) <= kTol);
    CHECK(max_rel_diff(tensor(simple, "attn_weights_2_naive"), tensor(simple, "attn_weights_2")) <= kTol);
    // The dot product by hand is score 0; torch.dot is the loop's own call, so the very same number.
    CHECK(rel_diff(tensor(simple, "res")(), tensor(simple, "attn_scores_2")(0)) <= kTol);
    CHECK(same_bits(tensor(simple, "res_torch_dot")(), tensor(simple, "attn_scores_2")(0)));
    // all-tokens recomputes 3.3.1's context vector for the book's query, as simple computes it.
    LessonConfig book_query = c;
    book_query.query.reset();
    CHECK(same_bits(tensor(all, "context_vec_2"), tensor(run_simple(in, book_query), "context_vec_2")));

    // 3.4.1 and 3.4.2: seeded alike (123 and 123, or --seed for both), the step-by-step weights are
    // SelfAttention_v1's, so its row q is context_vec_2; the query's own key and value are rows of all.
    const Trace tr = run_trainable(in, c);
    CHECK(max_rel_diff(tensor(tr, "context_vec_2"), row(tensor(tr, "sa_v1_output"), q)) <= kTol);
    CHECK(max_rel_diff(tensor(tr, "key_2"), row(tensor(tr, "keys"), q)) <= kTol);
    CHECK(max_rel_diff(tensor(tr, "value_2"), row(tensor(tr, "values"), q)) <= kTol);
    CHECK(rel_diff(tensor(tr, "attn_score_22")(), tensor(tr, "attn_scores_2")(q)) <= kTol);
    // Exercise 3.1: v1 with v2's weights is v2 to the bit without a bias; with one, the step's max diff is
    // the real difference.
    const AnyTensor v1 = tensor(tr, "sa_v1_output_v2_weights"), v2 = tensor(tr, "sa_v2_output");
    if (!c.qkv_bias) {
      CHECK(same_bits(v1, v2));
      CHECK(same_bits(tensor(tr, "v1_v2_max_diff")(), 0.0f));
    } else {
      const float diff = xt::amax(xt::abs(v1 - v2))();
      CHECK(same_bits(tensor(tr, "v1_v2_max_diff")(), diff));
      biased += diff > 0.0f;
    }

    // 3.5.1: zeroing and renormalising gives the -inf mask's softmax; the masks are tril and triu.
    const Trace causal = run_causal(in, c);
    CHECK(max_rel_diff(tensor(causal, "masked_simple_norm"), tensor(causal, "causal_attn_weights")) <= kTol);
    CHECK(same_bits(tensor(causal, "masked_simple"),
                    AnyTensor(tensor(causal, "attn_weights") * tensor(causal, "mask_simple"))));
    CHECK(same_bits(tensor(causal, "mask_simple"), AnyTensor(xt::tril(xt::ones<float>({n, n})))));
    CHECK(same_bits(tensor(causal, "mask"), AnyTensor(xt::triu(xt::ones<float>({n, n}), 1))));
    check_masked_fill(tensor(causal, "attn_scores"), tensor(causal, "masked"), "causal masked");
    // 3.5.2 drops out the very weights 3.5.1 computed.
    CHECK(same_bits(tensor(run_dropout(in, c), "causal_attn_weights"), tensor(causal, "causal_attn_weights")));
    // 3.5.3: the batch is one sequence stacked, so without dropout every sequence's weights are the same;
    // with --seed, CausalAttention draws sa_v2's weights (W_query, W_key, W_value, same shapes), so its
    // weights are causal_attn_weights up to the order of the sums (bmm against SGEMM).
    const AnyTensor& ca_w = tensor(causal, "ca_attn_weights");  // (b, n, n)
    if (c.dropout == 0.0) {
      // Not bit for bit: nn.Linear projects the batch as one (b * n, d_in) SGEMM, whose rows at different
      // places of the product may be added up by different kernel paths (PyTorch's too).
      for (std::size_t b = 1; b < c.batch; ++b) {
        CHECK(max_rel_diff(AnyTensor(xt::view(ca_w, b)), AnyTensor(xt::view(ca_w, 0))) <= kTol);
        CHECK(max_rel_diff(AnyTensor(xt::view(tensor(causal, "context_vecs"), b)),
                           AnyTensor(xt::view(tensor(causal, "context_vecs"), 0))) <= kTol);
      }
      if (c.seed) {
        for (std::size_t b = 0; b < c.batch; ++b)
          CHECK(max_rel_diff(AnyTensor(xt::view(ca_w, b)), tensor(causal, "causal_attn_weights")) <= kTol);
        ++seeded;
      }
    }

    // 3.6.1: the wrapper's head 0 is drawn first from the same seed as causal's ca, so it is ca; with
    // dropout only a single head draws its mask at ca's point of the stream. The output is the heads side
    // by side.
    const Trace wrapper = run_mha_wrapper(in, c);
    if (c.dropout == 0.0 || c.heads == 1) {
      CHECK(same_bits(tensor(wrapper, "head_0_attn_weights"), ca_w));
      CHECK(same_bits(tensor(wrapper, "head_0_context_vec"), tensor(causal, "context_vecs")));
      ++head_0_compared;
    }
    {
      const AnyTensor& out = tensor(wrapper, "context_vecs");  // (b, n, heads * d_out)
      std::size_t bad = 0;
      for (std::size_t h = 0; h < c.heads; ++h) {
        const AnyTensor& head = tensor(wrapper, "head_" + std::to_string(h) + "_context_vec");  // (b, n, d_out)
        for_each_index(shape_of(head), [&](std::size_t flat, const std::vector<std::size_t>& x) {
          bad += !same_bits(head.data()[flat], out(x[0], x[1], h * c.d_out + x[2]));
        });
      }
      CHECK(bad == 0);
    }

    // 3.6.2: view and transpose only move numbers; einsum's scores are the batched product's; one head
    // without dropout is CausalAttention (same seed, same draws: W_query, W_key, W_value of (d_out, d_in);
    // the same bmm, scale, mask, softmax and bmm).
    const Trace mha = run_mha(in, c);
    check_head_split(tensor(mha, "queries"), tensor(mha, "queries_heads"), false, "mha queries_heads");
    check_head_split(tensor(mha, "keys"), tensor(mha, "keys_heads"), false, "mha keys_heads");
    check_head_split(tensor(mha, "values"), tensor(mha, "values_view"), true, "mha values_view");
    check_head_split(tensor(mha, "context_vec"), tensor(mha, "context_vec_heads"), true, "mha context_vec");
    CHECK(same_bits(tensor(mha, "einsum_scores_permuted"), tensor(mha, "attn_scores")));
    CHECK(same_bits(tensor(mha, "einsum_max_diff")(), 0.0f));
    check_masked_fill(tensor(mha, "attn_scores"), tensor(mha, "masked"), "mha masked");
    {
      const AnyTensor& wq = tensor(mha, "mha.W_query.weight");    // (d_out, d_in)
      const AnyTensor& heads = tensor(mha, "W_query_heads");      // (heads, hd, d_in)
      REQUIRE(wq.size() == heads.size());
      CHECK(std::equal(wq.begin(), wq.end(), heads.begin(), [](float a, float b) { return same_bits(a, b); }));
    }
    if (c.heads == 1 && c.dropout == 0.0) {
      CHECK(same_bits(tensor(mha, "context_vec"), tensor(causal, "context_vecs")));
      const AnyTensor& w = tensor(mha, "attn_weights");  // (b, 1, n, n)
      CHECK(std::equal(w.begin(), w.end(), ca_w.begin(), ca_w.end(), [](float a, float b) { return same_bits(a, b); }));
      ++one_head;
    }

    // GQA: query head h reads key/value group h / group_size (repeat_interleave, not tile).
    const Trace gqa = run_gqa(in, c);
    {
      const std::size_t group = c.heads / c.kv_groups;
      const AnyTensor &keys = tensor(gqa, "keys"), &values = tensor(gqa, "values");  // (b, kv, n, hd)
      const AnyTensor &kr = tensor(gqa, "keys_repeated"), &vr = tensor(gqa, "values_repeated");  // (b, h, n, hd)
      std::size_t bad = 0;
      for_each_index(shape_of(kr), [&](std::size_t flat, const std::vector<std::size_t>& x) {
        bad += !same_bits(kr.data()[flat], keys(x[0], x[1] / group, x[2], x[3]));
        bad += !same_bits(vr.data()[flat], values(x[0], x[1] / group, x[2], x[3]));
      });
      CHECK(bad == 0);
      const AnyTensor& of_head = tensor(gqa, "kv_group_of_head");
      for (std::size_t h = 0; h < c.heads; ++h) CHECK(of_head(h) == static_cast<float>(h / group));
      check_masked_fill(tensor(gqa, "attn_scores"), tensor(gqa, "masked"), "gqa masked");
    }
  }
  edges.check();
  // Each conditional relation above was checked in some cases.
  CHECK(seeded > 0);
  CHECK(one_head > 0);
  CHECK(head_0_compared > 0);
  CHECK(biased > 0);
}

TEST_CASE("properties: GQA with kv_groups == heads and MHA's weights computes MHA's numbers, dropout included",
          "[properties]") {
  // Both classes run multi_head_attend (repeat_interleave by 1 copies), so given the same weights (MHA's
  // out_proj bias zeroed: GQA's has none) and the same generator state, every stage is the same.
  Rng rng(2718);
  constexpr std::size_t kCases = 100;
  std::size_t ran = 0;
  for (std::size_t i = 0; i < kCases; ++i) {
    const std::size_t n = pick_tokens(rng), d_in = pick(rng, 1, 16);
    const Inputs in = random_inputs(rng, n, d_in);
    const LessonConfig c = random_config(rng, n);
    INFO("case " << i << ": " << describe(in, c));
    const std::uint64_t seed = c.seed.value_or(123);
    TorchGenerator g1(seed), g2(seed + 1);
    MultiHeadAttention mha(d_in, c.d_out, c.dropout, c.heads, c.qkv_bias, g1);
    GroupedQueryAttention gqa(d_in, c.d_out, c.dropout, c.heads, c.heads, c.qkv_bias, g2);
    for (auto [from, to] : {std::pair<const Linear*, Linear*>{&mha.W_query, &gqa.W_query},
                            {&mha.W_key, &gqa.W_key}, {&mha.W_value, &gqa.W_value}, {&mha.out_proj, &gqa.out_proj}}) {
      REQUIRE(to->weight.shape() == from->weight.shape());
      to->weight = from->weight;
      if (to->bias.size() > 0) to->bias = from->bias;
    }
    mha.out_proj.bias.fill(0.0f);
    const Tensor3 x = make_batch(in.embeddings, c.batch);
    g1.manual_seed(seed + 2);
    g2.manual_seed(seed + 2);
    const MultiHeadPass a = mha.attend(x, g1, c.dropout_rng), b = gqa.attend(x, g2, c.dropout_rng);
    CHECK(same_bits(AnyTensor(a.keys_repeated), AnyTensor(b.keys_repeated)));
    CHECK(same_bits(a.attn_weights, b.attn_weights));
    CHECK(same_bits(a.attn_weights_dropout, b.attn_weights_dropout));
    CHECK(same_bits(AnyTensor(a.context_combined), AnyTensor(b.context_combined)));
    // out_proj adds MHA's zero bias: -0.0 may become 0.0, so equal as numbers.
    const bool equal_outputs = a.context_vecs == b.context_vecs;
    CHECK(equal_outputs);
    ++ran;
  }
  CHECK(ran == kCases);
}

namespace {

// x with its rows (and, with `both`, its columns) taken in the order perm: y(i, j) = x(perm[i], perm[j]).
AnyTensor permute_tokens(const AnyTensor& x, const std::vector<std::size_t>& perm, bool both) {
  REQUIRE(x.dimension() >= 1);
  REQUIRE(x.shape()[0] == perm.size());
  AnyTensor y = x;
  const std::size_t row = x.size() / perm.size();
  for (std::size_t i = 0; i < perm.size(); ++i)
    for (std::size_t r = 0; r < row; ++r) {
      std::size_t from = perm[i] * row + r;
      if (both) {
        REQUIRE(x.dimension() == 2);
        from = perm[i] * row + perm[r];
      }
      y.data()[i * row + r] = x.data()[from];
    }
  return y;
}

}  // namespace

TEST_CASE("properties: without positions, permuting the tokens permutes the outputs' rows (simple, all-tokens, trainable)",
          "[properties]") {
  Rng rng(16180);
  constexpr std::size_t kCases = 200;
  std::size_t causal_not_equivariant = 0;
  for (std::size_t i = 0; i < kCases; ++i) {
    const std::size_t n = pick_tokens(rng, 2), d_in = pick(rng, 1, 16);
    const Inputs in = random_inputs(rng, n, d_in);
    LessonConfig c = random_config(rng, n);
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    if (std::is_sorted(perm.begin(), perm.end())) std::swap(perm[0], perm[1]);  // never the identity
    Inputs permuted = in;
    for (std::size_t t = 0; t < n; ++t) {
      xt::row(permuted.embeddings, t) = xt::row(in.embeddings, perm[t]);
      permuted.tokens[t] = in.tokens[perm[t]];
    }
    // The same query token, wherever it went.
    const std::size_t q = static_cast<std::size_t>(*c.query);
    LessonConfig cp = c;
    cp.query = static_cast<std::int64_t>(std::find(perm.begin(), perm.end(), q) - perm.begin());
    std::ostringstream order;
    for (std::size_t p : perm) order << p << " ";
    INFO("case " << i << ": " << describe(in, c) << "; permutation " << order.str());

    const auto rows_permuted = [&](const Trace& a, const Trace& b, const std::string& id, bool both) {
      INFO(a.info.name << " " << id);
      CHECK(max_rel_diff(tensor(b, id), permute_tokens(tensor(a, id), perm, both)) <= kTol);
    };
    const auto unchanged = [&](const Trace& a, const Trace& b, const std::string& id) {
      INFO(a.info.name << " " << id);
      CHECK(max_rel_diff(tensor(b, id), tensor(a, id)) <= kTol);
    };

    const Trace simple = run_simple(in, c), simple_p = run_simple(permuted, cp);
    unchanged(simple, simple_p, "query");
    rows_permuted(simple, simple_p, "attn_scores_2", false);
    rows_permuted(simple, simple_p, "attn_weights_2", false);
    unchanged(simple, simple_p, "context_vec_2");

    const Trace all = run_all_tokens(in, c), all_p = run_all_tokens(permuted, c);
    rows_permuted(all, all_p, "attn_scores_loop", true);
    rows_permuted(all, all_p, "attn_scores", true);
    rows_permuted(all, all_p, "attn_weights", true);
    rows_permuted(all, all_p, "all_row_sums", false);
    rows_permuted(all, all_p, "all_context_vecs", false);

    // The weights are drawn from the seed, not the input: the same in both runs.
    const Trace tr = run_trainable(in, c), tr_p = run_trainable(permuted, cp);
    for (const char* id : {"keys", "values", "attn_scores_2", "attn_weights_2", "sa_v1_output", "sa_v2_output",
                           "sa_v1_output_v2_weights"})
      rows_permuted(tr, tr_p, id, false);
    for (const char* id : {"query_2", "key_2", "value_2", "attn_score_22", "context_vec_2"}) unchanged(tr, tr_p, id);

    // The causal mask depends on positions, so the same comparison tells causal attention apart.
    const Trace causal = run_causal(in, c), causal_p = run_causal(permuted, c);
    const AnyTensor& w = tensor(causal, "causal_attn_weights");
    causal_not_equivariant += max_rel_diff(tensor(causal_p, "causal_attn_weights"), permute_tokens(w, perm, true)) > kTol;
  }
  CHECK(causal_not_equivariant == kCases);
}
