// attn simple — 3.3.1 A simple self-attention mechanism without trainable weights.
// One query token attends to every input token: dot-product scores, three ways to normalise them,
// and the weighted sum of the inputs that is the query's context vector.
#include "core/nn.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo simple_info() { return LessonText::info("simple", "3.3.1"); }

// x.sum() as a step's value, shape (): the book's check that weights sum to 1.
static Scalar sum_scalar(const Vector& x) { return Scalar(sum_of(x)); }

ResolvedTrace run_simple(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  const std::size_t q = effective_query(cfg.query, in);
  Trace t(simple_info(), in, sel);
  LessonText text(t, "simple");
  text.set("q", q).set("who", token_repr(in.tokens[q])).set("label", token_label(in, q));
  t.config["query"] = q;
  add_query_notes(t, in, q);

  const Node<Matrix> inputs = t.embeddings();  // (num_tokens, d_in)
  const std::size_t n = in.num_tokens();
  const std::size_t d_in = in.d_in();

  text.add("inputs", *inputs);

  const Node<Vector> query = t.keep<Vector>(xt::row(*inputs, q));  // (d_in,)
  text.add("query", *query);

  // The book's loop of dot products, one score per input token.
  const auto attn_scores_2 = t.lazy<Vector>([](const Matrix& inputs, const Vector& query) {
    const std::size_t n = inputs.shape(0), d_in = inputs.shape(1);
    Vector scores = xt::empty<float>({n});  // (num_tokens,)
    for (std::size_t i = 0; i < n; ++i) scores(i) = dot(d_in, &inputs(i, 0), 1, query.data(), 1);
    return scores;
  }, inputs, query);
  text.add("attn_scores_2", {n}, attn_scores_2);

  // The book's check of one dot product by hand: token 0 against the query, element by element.
  const auto res = [](const Matrix& inputs, const Vector& query) {
    Scalar sum = Scalar(0.0f);  // ()
    for (std::size_t idx = 0; idx < inputs.shape(1); ++idx) sum() += inputs(0, idx) * query(idx);
    return sum;
  };
  text.add("res", {}, res, inputs, query);
  text.add("res_torch_dot", {}, [](const Matrix& inputs, const Vector& query) {
    return Scalar(dot(inputs.shape(1), &inputs(0, 0), 1, query.data(), 1));
  }, inputs, query);

  const auto attn_weights_2_tmp = t.lazy<Vector>([](const Vector& attn_scores_2) {
    return Vector(attn_scores_2 / sum_of(attn_scores_2));
  }, attn_scores_2);  // (num_tokens,)
  text.add("attn_weights_2_tmp", {n}, attn_weights_2_tmp);
  text.add("attn_weights_2_tmp_sum", {}, sum_scalar, attn_weights_2_tmp);

  const auto attn_weights_2_naive = t.lazy<Vector>(softmax_naive, attn_scores_2);  // (num_tokens,)
  text.add("attn_weights_2_naive", {n}, attn_weights_2_naive);
  text.add("attn_weights_2_naive_sum", {}, sum_scalar, attn_weights_2_naive);

  const auto attn_weights_2 = t.lazy<Vector>([](const Vector& attn_scores_2) { return softmax(attn_scores_2); },
                                             attn_scores_2);  // (num_tokens,)
  text.add("attn_weights_2", {n}, attn_weights_2);
  text.add("attn_weights_2_sum", {}, sum_scalar, attn_weights_2);

  // The book's loop: the context vector is the weighted sum of all input vectors.
  const auto context_vec_2 = [](const Matrix& inputs, const Vector& attn_weights_2) {
    Vector sum = xt::zeros<float>({inputs.shape(1)});  // (d_in,)
    for (std::size_t i = 0; i < inputs.shape(0); ++i) {
      const Vector weighted = attn_weights_2(i) * xt::row(inputs, i);  // (d_in,)
      sum += weighted;
    }
    return sum;
  };
  text.add("context_vec_2", {d_in}, context_vec_2, inputs, attn_weights_2);
  return t.resolve();
}

Lesson simple_lesson() {
  return {simple_info(), {{{{Opt::Query, ""}}, LessonConfig{}, run_simple}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "2048x2048"}}, {}}};
}

}  // namespace attn
