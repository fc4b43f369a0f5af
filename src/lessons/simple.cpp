// attn simple — 3.3.1 A simple self-attention mechanism without trainable weights.
// One query token attends to every input token: dot-product scores, three ways to normalise them,
// and the weighted sum of the inputs that is the query's context vector.
#include "core/nn.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo simple_info() {
  return {"simple", "3.3.1", "A simple self-attention mechanism without trainable weights", "One query attends to every token: dot-product scores, softmax weights, one context vector"};
}

Trace run_simple(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  const std::size_t q = effective_query(cfg.query, in);
  const std::string qs = std::to_string(q);
  const std::string who = "\"" + in.tokens[q] + "\"";
  Trace t(simple_info(), in, sel);
  t.config["query"] = q;
  t.notes.push_back("query: token " + token_label(in, q) + " (--query)");
  for (const auto& line : wrap_words(query_note(in, q), 80)) t.notes.push_back(line);

  const Matrix& inputs = in.embeddings;  // (num_tokens, d_in)
  const std::size_t n = in.num_tokens();
  const std::size_t d_in = in.d_in();

  t.add("inputs", "The input embeddings",
        "Each row is one token's embedding vector; self-attention will mix these rows.",
        "inputs = torch.tensor([...])  # (num_tokens, d_in)", inputs);

  const Vector query = xt::row(inputs, q);  // (d_in,)
  t.add("query", "The query: token " + token_label(in, q),
        "The token whose context vector we compute. Attention asks how relevant every token is to it.",
        "query = inputs[" + qs + "]", query);

  // The book's loop of dot products, one score per input token.
  const auto attn_scores_2 = t.lazy<Vector>([&] {
    Vector scores = xt::empty<float>({n});  // (num_tokens,)
    for (std::size_t i = 0; i < n; ++i) scores(i) = dot(d_in, &inputs(i, 0), 1, query.data(), 1);
    return scores;
  });
  t.add("attn_scores_2", "Attention scores of " + who,
        "Each score is the dot product of the query with one input token: the more two embeddings point the "
        "same way, the larger it is.",
        "attn_scores_2 = torch.empty(inputs.shape[0])\n"
        "for i, x_i in enumerate(inputs):\n"
        "    attn_scores_2[i] = torch.dot(x_i, query)",
        {n}, attn_scores_2);

  // The book's check of one dot product by hand: token 0 against the query, element by element.
  const auto res = [&] {
    Scalar sum = Scalar(0.0f);  // ()
    for (std::size_t idx = 0; idx < d_in; ++idx) sum() += inputs(0, idx) * query(idx);
    return sum;
  };
  t.add("res", "One dot product by hand: token 0 against the query",
        "Multiplying two vectors element by element and adding the products is all a dot product is; this is "
        "attn_scores_2[0].",
        "res = 0.\n"
        "for idx, element in enumerate(inputs[0]):\n"
        "    res += inputs[0][idx] * query[idx]\n"
        "print(res)",
        {}, res);
  t.add("res_torch_dot", "The same with torch.dot", "torch.dot computes the same number in one call.",
        "print(torch.dot(inputs[0], query))", {},
        [&] { return Scalar(dot(d_in, &inputs(0, 0), 1, query.data(), 1)); });

  const auto attn_weights_2_tmp = t.lazy<Vector>([&] { return Vector(attn_scores_2() / sum_of(attn_scores_2())); });  // (num_tokens,)
  t.add("attn_weights_2_tmp", "Scores divided by their sum",
        "A first way to turn scores into weights that sum to 1. It works here, but breaks for negative or "
        "zero-sum scores, which is why attention uses softmax.",
        "attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()", {n},
        attn_weights_2_tmp);
  t.add("attn_weights_2_tmp_sum", "Their sum", "The normalised weights add up to 1.",
        "attn_weights_2_tmp.sum()", {}, [&] { return Scalar(sum_of(attn_weights_2_tmp())); });

  const auto attn_weights_2_naive = t.lazy<Vector>([&] { return softmax_naive(attn_scores_2()); });  // (num_tokens,)
  t.add("attn_weights_2_naive", "Naive softmax",
        "Softmax exponentiates each score and divides by the total, so every weight is positive and they sum "
        "to 1. Computed this directly, exp overflows for large scores.",
        "def softmax_naive(x):\n"
        "    return torch.exp(x) / torch.exp(x).sum(dim=0)\n"
        "\n"
        "attn_weights_2_naive = softmax_naive(attn_scores_2)",
        {n}, attn_weights_2_naive);
  t.add("attn_weights_2_naive_sum", "Their sum", "Softmax weights add up to 1.",
        "attn_weights_2_naive.sum()", {}, [&] { return Scalar(sum_of(attn_weights_2_naive())); });

  const auto attn_weights_2 = t.lazy<Vector>([&] { return softmax(attn_scores_2()); });  // (num_tokens,)
  t.add("attn_weights_2", "Attention weights (torch.softmax)",
        "PyTorch's softmax gives the same weights but subtracts the largest score first, so it never "
        "overflows. These are the attention weights of " + who + ".",
        "attn_weights_2 = torch.softmax(attn_scores_2, dim=0)", {n}, attn_weights_2);
  t.add("attn_weights_2_sum", "Their sum", "Softmax weights add up to 1.", "attn_weights_2.sum()", {},
        [&] { return Scalar(sum_of(attn_weights_2())); });

  // The book's loop: the context vector is the weighted sum of all input vectors.
  const auto context_vec_2 = [&] {
    Vector sum = xt::zeros<float>({d_in});  // (d_in,)
    for (std::size_t i = 0; i < n; ++i) {
      const Vector weighted = attn_weights_2()(i) * xt::row(inputs, i);  // (d_in,)
      sum += weighted;
    }
    return sum;
  };
  t.add("context_vec_2", "Context vector of " + who,
        "Every input token scaled by its attention weight, then summed: an embedding of " + who +
            " enriched with what the rest of the sequence says.",
        "query = inputs[" + qs + "]\n"
        "context_vec_2 = torch.zeros(query.shape)\n"
        "for i, x_i in enumerate(inputs):\n"
        "    context_vec_2 += attn_weights_2[i] * x_i",
        {d_in}, context_vec_2);
  t.resolve();
  return t;
}

Lesson simple_lesson() {
  return {simple_info(), {{{{Opt::Query, ""}}, LessonConfig{}, run_simple}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "2048x2048"}}, {}}};
}

}  // namespace attn
