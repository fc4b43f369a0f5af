// attn causal — 3.5.1 Applying a causal attention mask, and 3.5.3 Implementing a compact causal
// attention class. A token may only attend to itself and the tokens before it: first by zeroing and
// renormalising weights, then the better way with -inf scores, then the CausalAttention module.
#include <cmath>

#include "modules/attention.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo causal_info() { return LessonText::info("causal", "3.5.1, 3.5.3"); }

namespace {
SelfAttention_v2 seeded_sa_v2(const Inputs& in, std::size_t d_out, std::uint64_t seed, bool qkv_bias, std::size_t head) {
  TorchGenerator gen(seed);
  SelfAttention_v2 sa_v2(in.d_in(), d_out, qkv_bias, gen);
  if (in.model) use_real_head(in, head, sa_v2.W_query, sa_v2.W_key, sa_v2.W_value);
  return sa_v2;
}

// softmax(scores / sqrt(d_k)), d_k the keys' width (keys.shape[-1]).
Matrix scaled_softmax(const Matrix& scores, std::size_t d_k) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_k)));
  const Matrix scaled = scores / scale;  // (n, n)
  return softmax(scaled);
}
}  // namespace

CausalWeights::CausalWeights(Trace& t, const Inputs& in, std::size_t d_out, std::uint64_t seed, bool qkv_bias,
                             std::size_t head)
    : sa_v2(t.keep(seeded_sa_v2(in, d_out, seed, qkv_bias, head))),
      queries(t.lazy<Matrix>([](const SelfAttention_v2& sa_v2, const Matrix& inputs) {
        return sa_v2.W_query.forward(inputs);
      }, sa_v2, t.embeddings())),  // (n, d_out)
      keys(t.lazy<Matrix>([](const SelfAttention_v2& sa_v2, const Matrix& inputs) {
        return sa_v2.W_key.forward(inputs);
      }, sa_v2, t.embeddings())),  // (n, d_out)
      attn_scores(t.lazy<Matrix>([](const Matrix& queries, const Matrix& keys) {
        return matmul(queries, keys, /*transpose_b=*/true);
      }, queries, keys)),  // (n, n)
      attn_weights(t.lazy<Matrix>(scaled_softmax, attn_scores, d_out)),  // (n, n)
      mask(t.lazy<Matrix>(causal_mask, in.num_tokens())),                // (n, n)
      // (n, n): torch.tril(torch.ones(n, n))
      mask_simple(t.lazy<Matrix>([](const Matrix& mask) { return Matrix(1.0f - mask); }, mask)),
      masked_simple(t.lazy<Matrix>([](const Matrix& attn_weights, const Matrix& mask_simple) {
        return Matrix(attn_weights * mask_simple);
      }, attn_weights, mask_simple)),  // (n, n)
      row_sums(t.lazy<Matrix>([](const Matrix& masked_simple) {
        const std::size_t n = masked_simple.shape(0);
        Matrix sums = xt::empty<float>({n, std::size_t{1}});  // (n, 1): keepdim=True
        for (std::size_t i = 0; i < n; ++i) sums(i, 0) = sum_of(&masked_simple(i, 0), n);
        return sums;
      }, masked_simple)),
      // (n, n), row_sums broadcast over columns
      masked_simple_norm(t.lazy<Matrix>([](const Matrix& masked_simple, const Matrix& row_sums) {
        return Matrix(masked_simple / row_sums);
      }, masked_simple, row_sums)),
      masked(t.lazy<Matrix>([](const Matrix& attn_scores) {
        return Matrix(mask_future(AnyTensor(attn_scores)));
      }, attn_scores)),  // (n, n)
      causal_attn_weights(t.lazy<Matrix>(scaled_softmax, masked, d_out)) {}  // (n, n)

ResolvedTrace run_causal(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(causal_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::OneHead, t);
  check_elements("the (b, num_tokens, num_tokens) attention weights", {cfg.batch, in.num_tokens(), in.num_tokens()});
  const std::uint64_t seed_v2 = cfg.seed.value_or(789);
  const std::uint64_t seed_ca = cfg.seed.value_or(123);
  const std::string bias_arg = cfg.qkv_bias ? ", qkv_bias=True" : "";
  const std::size_t b = cfg.batch, n = in.num_tokens(), d_out = cfg.d_out;
  t.config["manual_seeds"] = {seed_v2, seed_ca};
  if (in.model) t.notes.push_back(model_note(in, cfg, ModelUse::OneHead, t.words));
  LessonText text(t, "causal");
  text.set("seed_v2", seed_v2).set("seed_ca", seed_ca).set("bias_arg", bias_arg).set("d_out", d_out);
  text.set("real", text.phrase({"real", in.model ? "model" : "book"}));
  text.set("real_sa_v2", real_head_run(text, in, "sa_v2", cfg.head.value_or(0)));
  text.set("real_ca", real_head_run(text, in, "ca", cfg.head.value_or(0)));

  const CausalWeights w(t, in, d_out, seed_v2, cfg.qkv_bias, cfg.head.value_or(0));
  text.add("queries", {n, d_out}, w.queries);
  text.add("keys", {n, d_out}, w.keys);
  text.add("attn_scores", {n, n}, w.attn_scores);
  text.add("attn_weights", {n, n}, w.attn_weights)
      .show_heatmap(false);
  text.add("mask_simple", {n, n}, w.mask_simple);
  text.add("masked_simple", {n, n}, w.masked_simple).show_heatmap(true);
  text.add("row_sums", {n, 1}, w.row_sums);
  text.add("masked_simple_norm", {n, n}, w.masked_simple_norm).show_heatmap(true);
  text.add("mask", {n, n}, w.mask);
  text.add("masked", {n, n}, w.masked).show_heatmap(true);
  text.add("causal_attn_weights", {n, n}, w.causal_attn_weights)
      .show_heatmap(true);

  const Node<Tensor3> batch = add_batch_step(text, b);  // (b, num_tokens, d_in)

  const State<TorchGenerator> gen = t.state(TorchGenerator(seed_ca));
  CausalAttention built(in.d_in(), d_out, cfg.dropout, cfg.qkv_bias, *gen);
  if (in.model) use_real_head(in, cfg.head.value_or(0), built.W_query, built.W_key, built.W_value);
  const Node<CausalAttention> ca = t.keep(std::move(built));
  const std::string ctor = "CausalAttention(d_in, d_out, context_length, " + py_float(cfg.dropout) +
                           bias_arg + ")";
  text.set("ctor", ctor);
  t.modules.push_back({"ca", ctor, ca->num_parameters()});
  add_linear_steps(text, "ca.W_query", ca->W_query, text.phrase("role_query"));
  add_linear_steps(text, "ca.W_key", ca->W_key, text.phrase("role_key"));
  add_linear_steps(text, "ca.W_value", ca->W_value, text.phrase("role_value"));
  text.run_first("ca.W_query.weight", text.phrase("notebook_module"));
  add_num_params_step(text, "ca", ca->num_parameters());
  // One forward pass: its dropout draws from gen after the parameters, as ca(batch) does.
  const auto pass = t.lazy<CausalAttention::Pass>([](const CausalAttention& ca, const Tensor3& batch,
                                                     TorchGenerator& gen, DropoutRng rng) {
    return ca.attend(batch, gen, rng);
  }, ca, batch, gen, cfg.dropout_rng);
  t.holds(CausalAttention::pass_numbers(b, n, d_out));
  text.add("ca_attn_weights", {b, n, n}, [](const CausalAttention::Pass& pass) { return pass.attn_weights; }, pass)
      .show_heatmap(true);
  text.add("context_vecs", {b, n, d_out}, [](const CausalAttention::Pass& pass) { return pass.context_vec; }, pass);
  return t.resolve();
}

Lesson causal_lesson() {
  return {causal_info(),
          {{{{Opt::DOut, option_help("causal", "d_out")},
             {Opt::Dropout, option_help("causal", "dropout")},
             {Opt::DropoutRng, ""},
             {Opt::Batch, ""},
             {Opt::Seed, seed_help(option_help("causal", "seeds"))},
             {Opt::QkvBias, ""},
             {Opt::Head, ""}},
            LessonConfig{},
            run_causal}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "1024x64", "--d-out", "64", "--batch", "8"}, {"--random", "256x256", "--d-out", "256", "--json"}},
                     {"--d-out", "16"}}};
}

}  // namespace attn
