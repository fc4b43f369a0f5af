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
static LessonInfo all_tokens_info() {
  return {"all-tokens", "3.3.2", "Computing attention weights for all input tokens", "Every token attends to every token: the score matrix, row-wise softmax, all context vectors"};
}

Trace run_all_tokens(const Inputs& in, const LessonConfig&, const Selection& sel) {
  Trace t(all_tokens_info(), in, sel);
  const Matrix& inputs = in.embeddings;  // (num_tokens, d_in)
  const std::size_t n = in.num_tokens();
  const std::size_t d_in = in.d_in();
  const std::size_t q = effective_query(std::nullopt, in);  // the book's query, row 2 ("journey")

  t.add("inputs", "The input embeddings", "Each row is one token's embedding vector.",
        "inputs = torch.tensor([...])  # (num_tokens, d_in)", inputs);

  // The book's double loop: one dot product per pair of tokens.
  const auto attn_scores_loop = [&] {
    Matrix scores = xt::empty<float>({n, n});  // (num_tokens, num_tokens)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) scores(i, j) = dot(d_in, &inputs(i, 0), 1, &inputs(j, 0), 1);
    return scores;
  };
  t.add("attn_scores_loop", "All attention scores, with two for-loops",
        "Row i holds the dot products of token i with every token, so row " + std::to_string(q) +
            " repeats the single query's scores.",
        "attn_scores = torch.empty(" + std::to_string(n) + ", " + std::to_string(n) +
            ")\n"
            "for i, x_i in enumerate(inputs):\n"
            "    for j, x_j in enumerate(inputs):\n"
            "        attn_scores[i, j] = torch.dot(x_i, x_j)",
        {n, n}, attn_scores_loop);

  const auto attn_scores = t.lazy<Matrix>([&] { return matmul(inputs, inputs, /*transpose_b=*/true); });  // (num_tokens, num_tokens)
  t.add("attn_scores", "All attention scores, as one matrix product",
        "The same matrix in one step: multiplying the inputs by their own transpose computes every dot product "
        "at once, and much faster than the loops.",
        "attn_scores = inputs @ inputs.T", {n, n}, attn_scores);

  const auto attn_weights = t.lazy<Matrix>([&] { return softmax(attn_scores()); });  // (num_tokens, num_tokens)
  t.add("attn_weights", "Attention weights, softmax of each row",
        "dim=-1 normalises along the last dimension, so each row (one query token) becomes weights that sum "
        "to 1.",
        "attn_weights = torch.softmax(attn_scores, dim=-1)", {n, n}, attn_weights)
      .show_heatmap(false);

  // The book's checks, in its order: row 2 of the weights, as printed, sums to 1, and so does every row;
  // then, after all_context_vecs, row 2 of the context vectors is 3.3.1's context_vec_2, computed here again
  // the way 3.3.1 computes it.
  // The book types the row in by hand, so the step's code shows the row's values. Those need the weights,
  // which exist only once the step is computed (after the plan and its limits are checked): the plan's
  // code names the row, and computing the step writes the values in.
  const auto printed_row = [&](std::size_t j) {
    const double w = static_cast<double>(attn_weights()(q, j));
    if (std::isnan(w)) return std::string("nan");  // Python's f"{w:.4f}", whatever NaN's sign bit
    char four[64];
    std::snprintf(four, sizeof four, "%.4f", w);
    return std::string(four);
  };
  const auto row_code = [](const std::string& row) {
    return "row_2_sum = sum([" + row + "])\nprint(\"Row 2 sum:\", row_2_sum)";
  };
  const std::size_t row_step = t.steps.size();
  t.add("row_2_sum", "Row " + std::to_string(q + 1) + " of the weights, as printed, sums to 1",
        "Adding up the row of " + token_label(in, q) + " as the book prints it, to four decimals: 1, give or take "
        "the rounding.",
        row_code("attn_weights[" + std::to_string(q) + "]"), {}, [&, row_step] {
          double sum = 0;  // Python's sum() of the printed (4-decimal) weights, in double
          std::string row;
          for (std::size_t j = 0; j < n; ++j) {
            sum += std::strtod(printed_row(j).c_str(), nullptr);
            row += (j ? ", " : "") + printed_row(j);
          }
          t.steps[row_step].code = row_code(row);
          return PyFloat{sum};
        });
  t.add("all_row_sums", "Every row sums to 1", "A check that the softmax normalised each row.",
        "attn_weights.sum(dim=-1)", {n}, [&] { return row_sums(attn_weights()); });  // (num_tokens,)

  t.add("all_context_vecs", "All context vectors",
        "Row i is the weighted sum of the inputs with token i's weights: one matrix product replaces the "
        "loop of 3.3.1 for every token at once.",
        "all_context_vecs = attn_weights @ inputs", {n, d_in},
        [&] { return matmul(attn_weights(), inputs); });  // (num_tokens, d_in)

  t.add("context_vec_2", "The context vector of 3.3.1, for comparison",
        "Computed again with 3.3.1's loops: it is row " + std::to_string(q) + " of all_context_vecs.",
        "print(\"Previous 2nd context vector:\", context_vec_2)", {d_in}, [&] {
          // simple's query is the same q; only its context_vec_2 and what that needs are computed.
          return run_simple(in, LessonConfig{}, Selection{{"context_vec_2"}, {}}).step("context_vec_2").tensor;
        });
  t.resolve();
  return t;
}

Lesson all_tokens_lesson() {
  return {all_tokens_info(), {{{}, LessonConfig{}, run_all_tokens}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "2048x64"}, {"--random", "1024x64", "--json"}}, {}}};
}

}  // namespace attn
