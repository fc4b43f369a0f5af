// attn all-tokens — 3.3.2 Computing attention weights for all input tokens.
// The single-query computation of 3.3.1 done for every token at once, first with loops and then as
// two matrix products.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/nn.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo all_tokens_info() { return LessonText::info("all-tokens", "3.3.2"); }

// A weight as the book prints it to type the row in: Python's f"{w:.4f}".
static std::string printed_weight(float weight) {
  const double w = static_cast<double>(weight);
  if (std::isnan(w)) return std::string("nan");  // Python's f"{w:.4f}", whatever NaN's sign bit
  char four[64];
  std::snprintf(four, sizeof four, "%.4f", w);
  return std::string(four);
}

ResolvedTrace run_all_tokens(const Inputs& in, const LessonConfig&, const Selection& sel) {
  Trace t(all_tokens_info(), in, sel);
  const Node<Matrix> inputs = t.embeddings();  // (num_tokens, d_in)
  const std::size_t n = in.num_tokens();
  const std::size_t d_in = in.d_in();
  const std::size_t q = effective_query(std::nullopt, in);  // the book's query, row 2 ("journey")
  LessonText text(t, "all-tokens");
  text.set("q", q).set("n", n).set("row", q + 1).set("label", token_label(in, q));

  text.add("inputs", *inputs);

  // The book's double loop: one dot product per pair of tokens.
  const auto attn_scores_loop = [](const Matrix& inputs) {
    const std::size_t n = inputs.shape(0), d_in = inputs.shape(1);
    Matrix scores = xt::empty<float>({n, n});  // (num_tokens, num_tokens)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) scores(i, j) = dot(d_in, &inputs(i, 0), 1, &inputs(j, 0), 1);
    return scores;
  };
  text.add("attn_scores_loop", {n, n}, attn_scores_loop, inputs);

  const auto attn_scores = t.lazy<Matrix>([](const Matrix& inputs) {
    return matmul(inputs, inputs, /*transpose_b=*/true);
  }, inputs);  // (num_tokens, num_tokens)
  text.add("attn_scores", {n, n}, attn_scores);

  const auto attn_weights = t.lazy<Matrix>([](const Matrix& attn_scores) { return softmax(attn_scores); },
                                           attn_scores);  // (num_tokens, num_tokens)
  text.add("attn_weights", {n, n}, attn_weights)
      .show_heatmap(false);

  // The book's checks, in its order: row 2 of the weights, as printed, sums to 1, and so does every row;
  // then, after all_context_vecs, row 2 of the context vectors is 3.3.1's context_vec_2, computed here again
  // the way 3.3.1 computes it.
  // The book types the row in by hand, so the step's code shows the row's values. Those need the weights,
  // which exist only once the step is computed (after the plan and its limits are checked): the plan's
  // code names the row, and computing the step writes the values in.
  const auto row_2_sum = [](const Matrix& attn_weights, std::size_t q, const LessonText& text) {
    double sum = 0;  // Python's sum() of the printed (4-decimal) weights, in double
    std::string row, run_row;  // as printed; as Python reads them (a NaN row, from scores that overflowed)
    for (std::size_t j = 0; j < attn_weights.shape(1); ++j) {
      const std::string w = printed_weight(attn_weights(q, j));
      sum += std::strtod(w.c_str(), nullptr);
      row += (j ? ", " : "") + w;
      run_row += (j ? ", " : "") + (w == "nan" ? std::string("float('nan')") : w);
    }
    LessonText::StepWords words = text.with({{"values", row}, {"run_values", run_row}}).step("row_2_sum");
    return WithCode<PyFloat>{PyFloat{sum}, std::move(words.code), std::move(words.run)};
  };
  const std::string row_q = "attn_weights[" + std::to_string(q) + "]";
  text.with({{"values", row_q}, {"run_values", row_q}}).add("row_2_sum", {}, row_2_sum, attn_weights, q, text);
  text.add("all_row_sums", {n}, [](const Matrix& attn_weights) { return row_sums(attn_weights); },
           attn_weights);  // (num_tokens,)

  text.add("all_context_vecs", {n, d_in}, [](const Matrix& attn_weights, const Matrix& inputs) {
    return matmul(attn_weights, inputs);
  }, attn_weights, inputs);  // (num_tokens, d_in)

  text.add("context_vec_2", {d_in}, [](const Inputs& in) {
    // simple's query is the same q; only its context_vec_2 and what that needs are computed.
    return run_simple(in, LessonConfig{}, Selection{{"context_vec_2"}, {}, false, {}}).step("context_vec_2").tensor;
  }, t.input());
  return t.resolve();
}

Lesson all_tokens_lesson() {
  return {all_tokens_info(), {{{}, LessonConfig{}, run_all_tokens}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "2048x64"}, {"--random", "1024x64", "--json"}}, {}}};
}

}  // namespace attn
