// What the book says must hold between the steps of a lesson, checked on its values.
#include <catch2/catch.hpp>

#include <xtensor/xio.hpp>
#include <xtensor/xmath.hpp>

#include "core/attention.hpp"
#include "lessons/lessons.hpp"

using namespace attn;

namespace {

Inputs book() { return load_embeddings(default_embeddings_path()); }

// Largest absolute elementwise difference; shapes must agree.
float max_diff(const AnyTensor& a, const AnyTensor& b) {
  REQUIRE(a.shape() == b.shape());
  return xt::amax(xt::abs(a - b))();
}

}  // namespace

TEST_CASE("simple: the loops, sums and softmaxes agree with each other", "[lessons]") {
  const Trace t = run_simple(book(), {});
  CHECK(t.config["query"] == 1);
  const AnyTensor& scores = t.step("attn_scores_2").tensor;
  // The scores are dot products of the query with every row.
  const Inputs in = book();
  for (std::size_t i = 0; i < 6; ++i) {
    float dot = 0;
    for (std::size_t k = 0; k < 3; ++k) dot += in.embeddings(i, k) * in.embeddings(1, k);
    CHECK(scores(i) == Approx(dot));
  }
  CHECK(t.step("attn_weights_2_tmp_sum").tensor() == Approx(1.0f));
  CHECK(t.step("attn_weights_2_sum").tensor() == Approx(1.0f));
  CHECK(max_diff(t.step("attn_weights_2_naive").tensor, t.step("attn_weights_2").tensor) < 1e-6f);
  // The context vector is the same as row 1 of all-tokens' matrix product.
  const Trace all = run_all_tokens(in, {});
  const AnyTensor row1 = xt::view(all.step("all_context_vecs").tensor, 1, xt::all());
  CHECK(max_diff(t.step("context_vec_2").tensor, row1) < 1e-6f);
}

TEST_CASE("simple: --query picks the token and is checked against the input", "[lessons]") {
  LessonConfig opt;
  opt.query = 5;
  const Trace t = run_simple(book(), opt);
  CHECK(t.step("query").tensor(0) == 0.05f);
  opt.query = 6;
  CHECK_THROWS_AS(run_simple(book(), opt), UsageError);
  // A one-token input defaults to query 0.
  const Inputs one = parse_embeddings_json("[[0.5, 0.25]]", "one");
  const Trace single = run_simple(one, {});
  CHECK(single.config["query"] == 0);
  CHECK(single.step("attn_weights_2").tensor(0) == 1.0f);
}

TEST_CASE("all-tokens: loops equal inputs @ inputs.T, rows sum to 1", "[lessons]") {
  const Trace t = run_all_tokens(book(), {});
  CHECK(max_diff(t.step("attn_scores_loop").tensor, t.step("attn_scores").tensor) < 1e-6f);
  const AnyTensor& sums = t.step("all_row_sums").tensor;
  REQUIRE(sums.size() == 6);
  for (float s : sums) CHECK(s == Approx(1.0f).margin(1e-6));
}

TEST_CASE("trainable: the step-by-step path equals SelfAttention_v1 with the same seed", "[lessons]") {
  for (std::size_t q : {0, 1, 4}) {
    LessonConfig opt;
    opt.query = q;
    const Trace t = run_trainable(book(), opt);
    const AnyTensor row = xt::view(t.step("sa_v1_output").tensor, q, xt::all());
    CHECK(max_diff(t.step("context_vec_2").tensor, row) < 1e-6f);
    CHECK(t.step("attn_score_22").tensor() == Approx(t.step("attn_scores_2").tensor(q)));
  }
}

TEST_CASE("trainable: seeds, d_out and qkv_bias reach the modules", "[lessons]") {
  LessonConfig opt;
  const Trace book_seeds = run_trainable(book(), opt);
  CHECK(book_seeds.config["manual_seeds"] == nlohmann::ordered_json({123, 123, 789}));
  // "seed" itself (null here) is written by the command line from the option table: test_architecture.cpp.
  opt.seed = 789;
  const Trace all_789 = run_trainable(book(), opt);
  // sa_v2 is seeded with 789 either way; the step-by-step weights change.
  CHECK(max_diff(book_seeds.step("sa_v2_output").tensor, all_789.step("sa_v2_output").tensor) == 0.0f);
  CHECK(max_diff(book_seeds.step("W_query").tensor, all_789.step("W_query").tensor) > 0.01f);
  opt.d_out = 5;
  opt.qkv_bias = true;
  const Trace wide = run_trainable(book(), opt);
  CHECK(wide.step("sa_v2_output").tensor.shape() == std::vector<std::size_t>{6, 5});
  // The bias draws come after each weight, so W_key's weights differ from the bias-free module's.
  TorchGenerator a(789), b(789);
  const SelfAttention_v2 with_bias(3, 5, true, a), without(3, 5, false, b);
  CHECK(max_diff(with_bias.W_query.weight, without.W_query.weight) == 0.0f);
  CHECK(max_diff(with_bias.W_key.weight, without.W_key.weight) > 0.0f);
  opt.d_out = 0;
  CHECK_THROWS_AS(run_trainable(book(), opt), UsageError);
}

TEST_CASE("exercise 3.1: sa_v1 given sa_v2's transposed weights prints sa_v2's output, bit for bit", "[lessons]") {
  for (std::uint64_t seed : {123u, 789u, 7u}) {
    for (std::size_t d_out : {1u, 2u, 5u}) {
      LessonConfig opt;
      opt.seed = seed;
      opt.d_out = d_out;
      INFO("seed " << seed << ", d_out " << d_out);
      const Trace t = run_trainable(book(), opt);
      CHECK(max_diff(t.step("sa_v1_output_v2_weights").tensor, t.step("sa_v2_output").tensor) == 0.0f);
      CHECK(t.step("v1_v2_max_diff").tensor() == 0.0f);
      // The transfer is a transpose of nn.Linear's (d_out, d_in) weight.
      CHECK(t.step("sa_v1_W_query").tensor.shape() == std::vector<std::size_t>{3, d_out});
    }
  }
  // With a bias, only the weights carry over, and the outputs differ.
  LessonConfig bias;
  bias.qkv_bias = true;
  const Trace t = run_trainable(book(), bias);
  CHECK(t.step("v1_v2_max_diff").tensor() > 0.01f);
  CHECK(t.step("v1_v2_max_diff").tensor() == Approx(max_diff(t.step("sa_v1_output_v2_weights").tensor,
                                                             t.step("sa_v2_output").tensor)));
}

TEST_CASE("a --query names the token and the book's x^(i), and the step ids keep the book's names", "[lessons]") {
  LessonConfig opt;
  opt.query = 0;
  const Trace t = run_trainable(book(), opt);
  CHECK(t.step("x_2").title == "The query token 0 \"Your\", x^(1)");
  CHECK(t.step("x_2").explanation.find("x_2 is the book's name for its query x^(2); here it holds x^(1)") !=
        std::string::npos);
  std::string notes;
  for (const auto& n : t.notes) notes += n + " ";
  CHECK(notes.find("the steps keep its names (x_2, query_2, attn_scores_2, context_vec_2, ...), and here they hold "
                   "x^(1), inputs[0], \"Your\".") != std::string::npos);
  // The book's own query says nothing extra.
  const Trace book_query = run_simple(book(), {});
  CHECK(book_query.notes == std::vector<std::string>{"query: token 1 \"journey\", x^(2) (--query)"});
}
