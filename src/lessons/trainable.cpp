// attn trainable — 3.4.1 Computing the attention weights step by step, and 3.4.2 Implementing a
// compact self-attention Python class. Queries, keys and values come from three weight matrices;
// scores are scaled by sqrt(d_k); then the same computation packed into SelfAttention_v1 and _v2, and
// exercise 3.1: v2's weights transferred into v1 give the same output.
#include <cmath>

#include <xtensor/xmath.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "modules/attention.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo trainable_info() {
  return {"trainable", "3.4.1-3.4.2", "Implementing self-attention with trainable weights", "Query, key and value weights, scaled dot-product attention, SelfAttention_v1 and _v2"};
}

Trace run_trainable(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(trainable_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::OneHead, t);
  if (cfg.d_out == 0) throw UsageError("--d-out must be at least 1");
  const std::size_t q = effective_query(cfg.query, in);
  const std::string qs = std::to_string(q);
  const std::string who = "\"" + in.tokens[q] + "\"";
  // The book seeds three times: the step-by-step weights, SelfAttention_v1, SelfAttention_v2.
  const std::uint64_t seed_w = cfg.seed.value_or(123);
  const std::uint64_t seed_v1 = cfg.seed.value_or(123);
  const std::uint64_t seed_v2 = cfg.seed.value_or(789);
  const std::size_t d_in = in.d_in();
  const std::size_t d_out = cfg.d_out;
  const std::string bias_arg = cfg.qkv_bias ? ", qkv_bias=True" : "";

  const std::size_t n = in.num_tokens();
  t.config["query"] = q;
  t.config["manual_seeds"] = {seed_w, seed_v1, seed_v2};
  t.notes.push_back("query: token " + token_label(in, q) + " (--query)");
  for (const auto& line : wrap_words(query_note(in, q), 80)) t.notes.push_back(line);
  t.notes.push_back("d_in = " + std::to_string(d_in) + ", d_out = " + std::to_string(d_out) +
                    "; torch.manual_seed values: " + std::to_string(seed_w) + ", " + std::to_string(seed_v1) +
                    ", " + std::to_string(seed_v2) + (cfg.seed ? " (--seed)" : " (the book's)"));
  if (in.model) t.notes.push_back(model_note(in, cfg, ModelUse::OneHead));

  const Matrix& inputs = in.embeddings;  // (num_tokens, d_in)
  const Vector x_2 = xt::row(inputs, q);  // (d_in,)
  t.add("x_2", "The query token " + token_label(in, q),
        "This time the query is not used directly: it is first projected by trainable weights." +
            (q == kBookQuery ? std::string()
                             : " x_2 is the book's name for its query x^(2); here it holds x^(" + std::to_string(q + 1) +
                                   "), the token picked by --query."),
        "x_2 = inputs[" + qs + "]", x_2);

  TorchGenerator gen(seed_w);
  // Drawn in this order, as the book creates them.
  Matrix W_query = gen.rand(d_in, d_out);  // (d_in, d_out)
  Matrix W_key = gen.rand(d_in, d_out);    // (d_in, d_out)
  Matrix W_value = gen.rand(d_in, d_out);  // (d_in, d_out)
  // --model: the head's real projections. Its c_attn columns are already (d_in, d_out), the layout of these
  // plain parameters (x @ W); nn.Linear's (d_out, d_in) weight is their transpose. GPT-2's layers have a bias.
  Vector b_query, b_key, b_value;  // (d_out,) each, under --model
  if (in.model) {
    Linear q(W_query, {}), k(W_key, {}), v(W_value, {});
    use_real_head(in, *cfg.head, q, k, v);
    W_query = xt::transpose(q.weight), W_key = xt::transpose(k.weight), W_value = xt::transpose(v.weight);
    b_query = q.bias, b_key = k.bias, b_value = v.bias;
  }
  const std::string rand_call = "torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)";
  const std::string real = in.model ? "  # --model: head " + std::to_string(cfg.head.value_or(0)) +
                                          "'s columns of the real c_attn weight"
                                    : "";
  t.add("W_query", "Query weight matrix W_q",
        (in.model ? "Trained, not random: GPT-2's own query weights for this head." : "Random numbers for now; training would tune them.") +
            std::string(" It projects a ") + std::to_string(d_in) + "-dim embedding to a " + std::to_string(d_out) +
            "-dim query.",
        "torch.manual_seed(" + std::to_string(seed_w) + ")\nW_query = " + rand_call + real, W_query);
  t.add("W_key", "Key weight matrix W_k", in.model ? "The head's trained key weights." : "Drawn right after W_query from the same random stream.",
        "W_key = " + rand_call + real, W_key);
  t.add("W_value", "Value weight matrix W_v", in.model ? "The head's trained value weights." : "Drawn right after W_key.",
        "W_value = " + rand_call + real, W_value);
  if (in.model) {
    const std::string part = "GPT-2's projections have a bias too (its c_attn.bias, the head's part): ";
    t.add("b_query", "The query bias", part + "added to every query.", "b_query = c_attn.bias[query part, this head]",
          b_query);
    t.add("b_key", "The key bias", part + "added to every key.", "b_key = c_attn.bias[key part, this head]", b_key);
    t.add("b_value", "The value bias", part + "added to every value.", "b_value = c_attn.bias[value part, this head]",
          b_value);
  }
  const std::string plus_q = in.model ? " + b_query" : "", plus_k = in.model ? " + b_key" : "",
                    plus_v = in.model ? " + b_value" : "";
  const auto project = [&](const Vector& x, const Matrix& W, const Vector& bias) {
    Vector y = matvec(x, W);  // (d_out,)
    if (bias.size() > 0) y += bias;
    return y;
  };
  const auto project_all = [&](const Matrix& W, const Vector& bias) {
    Matrix y = matmul(inputs, W);  // (num_tokens, d_out)
    if (bias.size() > 0) y += xt::view(bias, xt::newaxis(), xt::all());
    return y;
  };

  const auto query_2 = t.lazy<Vector>([&] { return project(x_2, W_query, b_query); });  // (d_out,)
  t.add("query_2", "The query vector of " + who,
        "The query token projected by W_query: what this token is looking for.", "query_2 = x_2 @ W_query" + plus_q,
        {d_out}, query_2);
  t.add("key_2", "The key vector of " + who, "The same token projected by W_key: what it offers to be found by.",
        "key_2 = x_2 @ W_key" + plus_k, {d_out}, [&] { return project(x_2, W_key, b_key); });  // (d_out,)
  t.add("value_2", "The value vector of " + who,
        "The same token projected by W_value: what it contributes once attended to.",
        "value_2 = x_2 @ W_value" + plus_v, {d_out}, [&] { return project(x_2, W_value, b_value); });  // (d_out,)

  const auto keys = t.lazy<Matrix>([&] { return project_all(W_key, b_key); });  // (num_tokens, d_out)
  t.add("keys", "Keys of all tokens",
        "Every token projected by W_key at once: " + count_of(n, "token") + ", each now " +
            std::to_string(d_out) + "-dimensional.",
        "keys = inputs @ W_key" + plus_k, {n, d_out}, keys);
  const auto values = t.lazy<Matrix>([&] { return project_all(W_value, b_value); });  // (num_tokens, d_out)
  t.add("values", "Values of all tokens", "Every token projected by W_value.", "values = inputs @ W_value" + plus_v,
        {n, d_out}, values);

  t.add("attn_score_22", "One unnormalised score: query " + who + " against key " + who,
        "The attention score is now the dot product of a query with a key, not of two raw embeddings.",
        "keys_2 = keys[" + qs + "]\nattn_score_22 = query_2.dot(keys_2)", {},
        [&] { return Scalar(dot(d_out, query_2().data(), 1, &keys()(q, 0), 1)); });

  const auto attn_scores_2 = t.lazy<Vector>([&] { return matvec(query_2(), keys(), /*transpose_b=*/true); });  // (num_tokens,)
  t.add("attn_scores_2", "All scores of the query " + who,
        "One matrix product scores the query against every key.", "attn_scores_2 = query_2 @ keys.T",
        {n}, attn_scores_2);

  const auto attn_weights_2 = t.lazy<Vector>([&] {
    const double d_k = static_cast<double>(d_out);  // keys.shape[1]
    const float scale = static_cast<float>(std::sqrt(d_k));
    const Vector scaled = attn_scores_2() / scale;  // (num_tokens,)
    return softmax(scaled);                         // (num_tokens,)
  });
  t.add("attn_weights_2", "Attention weights, scaled by sqrt(d_k)",
        "Scores are divided by the square root of the key dimension before softmax; this keeps large "
        "dot products from making softmax too peaked, which would stall training.",
        "d_k = keys.shape[1]\nattn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)", {n}, attn_weights_2);

  t.add("context_vec_2", "Context vector of " + who,
        "The value vectors weighted by the attention weights and summed.", "context_vec_2 = attn_weights_2 @ values",
        {d_out}, [&] { return matvec(attn_weights_2(), values()); });  // (d_out,)

  gen.manual_seed(seed_v1);
  SelfAttention_v1 sa_v1(d_in, d_out, gen);
  if (in.model) sa_v1.W_query = W_query, sa_v1.W_key = W_key, sa_v1.W_value = W_value;  // its class has no bias
  t.needs_temporarily(SelfAttention_v2::forward_numbers(n, d_out));  // each forward below, one at a time
  t.add("sa_v1_output", "SelfAttention_v1: every token's context vector",
        in.model ? std::string("The steps above packed into a module with three nn.Parameter matrices, given the "
                               "head's real weights; SelfAttention_v1 has no bias, so its rows are not context_vec_2.")
                 : "The steps above packed into a module with three nn.Parameter matrices. Seeded the same way, its "
                   "row " + qs + " equals context_vec_2.",
        "torch.manual_seed(" + std::to_string(seed_v1) + ")\nsa_v1 = SelfAttention_v1(d_in, d_out)\nprint(sa_v1(inputs))",
        {n, d_out}, [&] { return sa_v1.forward(inputs); });  // (num_tokens, d_out)

  gen.manual_seed(seed_v2);
  SelfAttention_v2 sa_v2(d_in, d_out, cfg.qkv_bias, gen);
  if (in.model) use_real_head(in, *cfg.head, sa_v2.W_query, sa_v2.W_key, sa_v2.W_value);
  const auto sa_v2_output = t.lazy<Matrix>([&] { return sa_v2.forward(inputs); });  // (num_tokens, d_out)
  t.add("sa_v2_output", "SelfAttention_v2: the same with nn.Linear layers",
        "nn.Linear stores the transposed weight and initialises it with a better scheme than torch.rand, so "
        "the numbers differ from v1 even though the computation is the same.",
        "torch.manual_seed(" + std::to_string(seed_v2) + ")\nsa_v2 = SelfAttention_v2(d_in, d_out" + bias_arg +
            ")\nprint(sa_v2(inputs))",
        {n, d_out}, sa_v2_output);

  // Exercise 3.1: give sa_v1 the weights of sa_v2. nn.Linear stores its weight as (d_out, d_in), the
  // transpose of v1's (d_in, d_out) parameter, so the transfer transposes it.
  SelfAttention_v1 sa_v1_from_v2 = sa_v1;
  const std::string transfer = "Exercise 3.1: sa_v1 takes sa_v2's weights. nn.Linear keeps its weight as (d_out, d_in), "
                               "so v1's (d_in, d_out) parameter is its transpose.";
  sa_v1_from_v2.W_query = xt::transpose(sa_v2.W_query.weight);  // (d_in, d_out)
  sa_v1_from_v2.W_key = xt::transpose(sa_v2.W_key.weight);      // (d_in, d_out)
  sa_v1_from_v2.W_value = xt::transpose(sa_v2.W_value.weight);  // (d_in, d_out)
  t.add("sa_v1_W_query", "Exercise 3.1: sa_v2's query weight, transposed, into sa_v1", transfer,
        "sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)", sa_v1_from_v2.W_query);
  t.add("sa_v1_W_key", "Exercise 3.1: the key weight", "The same for W_key.",
        "sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T)", sa_v1_from_v2.W_key);
  t.add("sa_v1_W_value", "Exercise 3.1: the value weight", "The same for W_value.",
        "sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T)", sa_v1_from_v2.W_value);
  const auto sa_v1_output_v2_weights = t.lazy<Matrix>([&] { return sa_v1_from_v2.forward(inputs); });  // (num_tokens, d_out)
  t.add("sa_v1_output_v2_weights", "Exercise 3.1: SelfAttention_v1 with sa_v2's weights",
        cfg.qkv_bias ? "sa_v1 has no bias, so with --qkv-bias only the weights carry over and its output is not "
                       "sa_v2's: compare with sa_v2_output."
                     : "The same computation on the same weights: sa_v1 now prints exactly sa_v2_output.",
        "sa_v1(inputs)", {n, d_out}, sa_v1_output_v2_weights);
  t.add("v1_v2_max_diff", "Exercise 3.1, checked: the largest difference from sa_v2's output",
        cfg.qkv_bias ? "Not 0: the bias of sa_v2's layers has no place in sa_v1."
                     : "0: the two classes compute the same function once they hold the same weights.",
        "(sa_v1(inputs) - sa_v2(inputs)).abs().max()", {}, [&] {
          const Matrix difference = xt::abs(sa_v1_output_v2_weights() - sa_v2_output());  // (num_tokens, d_out)
          return Scalar(max_of(AnyTensor(difference)));  // NaN if a difference is NaN, as .max() gives
        });
  t.resolve();
  return t;
}

Lesson trainable_lesson() {
  return {trainable_info(),
          {{{{Opt::DOut, "Output dimension of the query, key and value projections"},
             {Opt::Seed, seed_help("123, 123 and 789; --seed 123 prints exercise 3.1's numbers")},
             {Opt::QkvBias, ""},
             {Opt::Query, ""},
             {Opt::Head, ""}},
            LessonConfig{},
            run_trainable}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "2048x16", "--d-out", "16"}},
                     {"--d-out", "16"}}};
}

}  // namespace attn
