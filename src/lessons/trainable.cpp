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
static LessonInfo trainable_info() { return LessonText::info("trainable", "3.4.1-3.4.2"); }

namespace {

// 3.4.1's three weight matrices, (d_in, d_out) each, kept by the trace; under --model the head's real
// projections and their biases (d_out,), which are empty otherwise.
struct StepWeights {
  Node<Matrix> W_query, W_key, W_value;
  Node<Vector> b_query, b_key, b_value;
};

// x @ W (+ bias): one token's projection (d_in,) -> (d_out,), or every token's (n, d_in) -> (n, d_out).
Vector project(const Vector& x, const Matrix& W, const Vector& bias) {
  Vector y = matvec(x, W);  // (d_out,)
  if (bias.size() > 0) y += bias;
  return y;
}
Matrix project_all(const Matrix& inputs, const Matrix& W, const Vector& bias) {
  Matrix y = matmul(inputs, W);  // (num_tokens, d_out)
  if (bias.size() > 0) y += xt::view(bias, xt::newaxis(), xt::all());
  return y;
}

// Draws the step-by-step weights from `gen` (seeded by the caller), as the book creates them, and adds
// them as steps.
StepWeights add_weights(const LessonText& text, const Inputs& in, const LessonConfig& cfg, TorchGenerator& gen) {
  Trace& t = text.trace();
  const std::size_t d_in = in.d_in(), d_out = cfg.d_out;
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
  const std::string book_or_model = in.model ? "model" : "book";
  text.add({"W_query", book_or_model}, W_query);
  text.add({"W_key", book_or_model}, W_key);
  text.add({"W_value", book_or_model}, W_value);
  if (in.model) {
    text.add("b_query", b_query);
    text.add("b_key", b_key);
    text.add("b_value", b_value);
  }
  return {t.keep(std::move(W_query)), t.keep(std::move(W_key)), t.keep(std::move(W_value)),
          t.keep(std::move(b_query)), t.keep(std::move(b_key)), t.keep(std::move(b_value))};
}

// 3.4.1 step by step: query q's query, key and value, every token's keys and values, the scaled softmax of
// the scores, and the context vector.
void add_step_by_step(const LessonText& text, const Node<Vector>& x_2, const StepWeights& w, std::size_t q) {
  Trace& t = text.trace();
  const Node<Matrix> inputs = t.embeddings();  // (num_tokens, d_in)
  const std::size_t n = inputs->shape(0), d_out = w.W_query->shape(1);

  const auto query_2 = t.lazy<Vector>(project, x_2, w.W_query, w.b_query);  // (d_out,)
  text.add("query_2", {d_out}, query_2);
  text.add("key_2", {d_out}, project, x_2, w.W_key, w.b_key);        // (d_out,)
  text.add("value_2", {d_out}, project, x_2, w.W_value, w.b_value);  // (d_out,)

  const auto keys = t.lazy<Matrix>(project_all, inputs, w.W_key, w.b_key);  // (num_tokens, d_out)
  text.add("keys", {n, d_out}, keys);
  const auto values = t.lazy<Matrix>(project_all, inputs, w.W_value, w.b_value);  // (num_tokens, d_out)
  text.add("values", {n, d_out}, values);

  text.add("attn_score_22", {}, [](const Vector& query_2, const Matrix& keys, std::size_t q) {
    return Scalar(dot(query_2.size(), query_2.data(), 1, &keys(q, 0), 1));
  }, query_2, keys, q);

  const auto attn_scores_2 = t.lazy<Vector>([](const Vector& query_2, const Matrix& keys) {
    return matvec(query_2, keys, /*transpose_b=*/true);
  }, query_2, keys);  // (num_tokens,)
  text.add("attn_scores_2", {n}, attn_scores_2);

  const auto attn_weights_2 = t.lazy<Vector>([](const Vector& attn_scores_2, const Matrix& keys) {
    const double d_k = static_cast<double>(keys.shape(1));  // keys.shape[1]
    const float scale = static_cast<float>(std::sqrt(d_k));
    const Vector scaled = attn_scores_2 / scale;  // (num_tokens,)
    return softmax(scaled);                       // (num_tokens,)
  }, attn_scores_2, keys);
  text.add("attn_weights_2", {n}, attn_weights_2);

  text.add("context_vec_2", {d_out}, [](const Vector& attn_weights_2, const Matrix& values) {
    return matvec(attn_weights_2, values);
  }, attn_weights_2, values);  // (d_out,)
}

// (num_tokens, d_in) -> (num_tokens, d_out): a module's forward as a computation of the trace.
template <class Module>
Matrix forward_of(const Module& m, const Matrix& inputs) {
  return m.forward(inputs);
}

// Exercise 3.1: give sa_v1 the weights of sa_v2, whose output it then gives. nn.Linear stores its weight
// as (d_out, d_in), the transpose of v1's (d_in, d_out) parameter, so the transfer transposes it.
void add_exercise_3_1(const LessonText& text, bool qkv_bias, SelfAttention_v1 sa_v1_from_v2,
                      const SelfAttention_v2& sa_v2, const Node<Matrix>& sa_v2_output) {
  Trace& t = text.trace();
  const std::size_t n = t.inputs.num_tokens(), d_out = sa_v2.W_query.weight.shape(0);
  sa_v1_from_v2.W_query = xt::transpose(sa_v2.W_query.weight);  // (d_in, d_out)
  sa_v1_from_v2.W_key = xt::transpose(sa_v2.W_key.weight);      // (d_in, d_out)
  sa_v1_from_v2.W_value = xt::transpose(sa_v2.W_value.weight);  // (d_in, d_out)
  text.add("sa_v1_W_query", sa_v1_from_v2.W_query);
  text.add("sa_v1_W_key", sa_v1_from_v2.W_key);
  text.add("sa_v1_W_value", sa_v1_from_v2.W_value);
  const auto sa_v1_output_v2_weights =
      t.lazy<Matrix>(forward_of<SelfAttention_v1>, t.keep(std::move(sa_v1_from_v2)), t.embeddings());  // (num_tokens, d_out)
  const std::string bias_or_book = qkv_bias ? "bias" : "book";
  text.add({"sa_v1_output_v2_weights", bias_or_book}, {n, d_out}, sa_v1_output_v2_weights);
  text.add({"v1_v2_max_diff", bias_or_book}, {}, [](const Matrix& sa_v1_output_v2_weights, const Matrix& sa_v2_output) {
    const Matrix difference = xt::abs(sa_v1_output_v2_weights - sa_v2_output);  // (num_tokens, d_out)
    return Scalar(max_of(AnyTensor(difference)));  // NaN if a difference is NaN, as .max() gives
  }, sa_v1_output_v2_weights, sa_v2_output);
}

// 3.4.2: SelfAttention_v1 and _v2, each seeded as the book seeds it; then exercise 3.1 on them.
void add_classes(const LessonText& text, const Inputs& in, const LessonConfig& cfg, const StepWeights& w,
                 TorchGenerator& gen, std::uint64_t seed_v1, std::uint64_t seed_v2) {
  Trace& t = text.trace();
  const Node<Matrix> inputs = t.embeddings();  // (num_tokens, d_in)
  const std::size_t n = in.num_tokens(), d_in = in.d_in(), d_out = cfg.d_out;
  const std::string book_or_model = in.model ? "model" : "book";

  gen.manual_seed(seed_v1);
  SelfAttention_v1 sa_v1(d_in, d_out, gen);
  if (in.model) sa_v1.W_query = *w.W_query, sa_v1.W_key = *w.W_key, sa_v1.W_value = *w.W_value;  // no bias
  t.needs_temporarily(SelfAttention_v2::forward_numbers(n, d_out));  // each forward below, one at a time
  text.add({"sa_v1_output", book_or_model}, {n, d_out}, forward_of<SelfAttention_v1>, t.keep(sa_v1),
           inputs);  // (num_tokens, d_out)

  gen.manual_seed(seed_v2);
  SelfAttention_v2 sa_v2(d_in, d_out, cfg.qkv_bias, gen);
  if (in.model) use_real_head(in, *cfg.head, sa_v2.W_query, sa_v2.W_key, sa_v2.W_value);
  const auto sa_v2_output = t.lazy<Matrix>(forward_of<SelfAttention_v2>, t.keep(sa_v2), inputs);  // (num_tokens, d_out)
  text.add("sa_v2_output", {n, d_out}, sa_v2_output);
  add_exercise_3_1(text, cfg.qkv_bias, sa_v1, sa_v2, sa_v2_output);
}

}  // namespace

// --model: the first of the head's rows in the layer's W_query, W_key, W_value (d_out = head_dim each).
static std::size_t head_rows_from(const LessonConfig& cfg) { return cfg.head.value_or(0) * cfg.d_out; }

ResolvedTrace run_trainable(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(trainable_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::OneHead, t);
  if (cfg.d_out == 0) throw UsageError("--d-out must be at least 1");
  const std::size_t q = effective_query(cfg.query, in);
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
  LessonText text(t, "trainable");
  text.set("q", q).set("who", token_repr(in.tokens[q])).set("label", token_label(in, q)).set("x", q + 1);
  text.set("d_in", d_in).set("d_out", d_out).set("n", n).set("bias_arg", bias_arg);
  text.set("seed_w", seed_w).set("seed_v1", seed_v1).set("seed_v2", seed_v2).set("head", cfg.head.value_or(0));
  add_query_notes(t, in, q);
  t.notes.push_back(text.phrase({"seeds_note", cfg.seed ? "given" : "book"}));
  if (in.model) t.notes.push_back(model_note(in, cfg, ModelUse::OneHead, t.words));

  const Node<Vector> x_2 = t.keep<Vector>(xt::row(in.embeddings, q));  // (d_in,)
  text.set("other_query", text.phrase({"other_query", q == kBookQuery ? "book" : "other"}));
  text.add("x_2", *x_2);

  TorchGenerator gen(seed_w);
  text.set("rand_call", "torch.nn.Parameter(torch.rand(d_in, d_out), requires_grad=False)");
  text.set("real", text.phrase({"real", in.model ? "model" : "book"}));
  text.set("real_sa_v2", real_head_run(text, in, "sa_v2", cfg.head.value_or(0)));
  text.set("rows_from", head_rows_from(cfg)).set("rows_to", head_rows_from(cfg) + d_out);
  text.set("layer", in.model ? in.model->layer : 0);
  // --model: where the head's biases sit in c_attn.bias, (3 * n_embd,): the queries', keys' and values'
  // thirds, each split into heads of d_out = head_dim.
  const std::size_t head_from = head_rows_from(cfg);
  text.set("query_from", head_from).set("query_to", head_from + d_out);
  text.set("key_from", d_in + head_from).set("key_to", d_in + head_from + d_out);
  text.set("value_from", 2 * d_in + head_from).set("value_to", 2 * d_in + head_from + d_out);
  const StepWeights w = add_weights(text, in, cfg, gen);
  text.set("plus_q", in.model ? " + b_query" : "").set("plus_k", in.model ? " + b_key" : "");
  text.set("plus_v", in.model ? " + b_value" : "");
  add_step_by_step(text, x_2, w, q);
  add_classes(text, in, cfg, w, gen, seed_v1, seed_v2);
  return t.resolve();
}

Lesson trainable_lesson() {
  return {trainable_info(),
          {{{{Opt::DOut, option_help("trainable", "d_out")},
             {Opt::Seed, seed_help(option_help("trainable", "seeds"))},
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
