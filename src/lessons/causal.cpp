// attn causal — 3.5.1 Applying a causal attention mask, and 3.5.3 Implementing a compact causal
// attention class. A token may only attend to itself and the tokens before it: first by zeroing and
// renormalising weights, then the better way with -inf scores, then the CausalAttention module.
#include <cmath>

#include "modules/attention.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo causal_info() {
  return {"causal", "3.5.1, 3.5.3", "Hiding future words with causal attention", "Mask the future: zero-and-renormalise, the -inf mask, and the CausalAttention class over a batch"};
}

namespace {
SelfAttention_v2 seeded_sa_v2(const Inputs& in, std::size_t d_out, std::uint64_t seed, bool qkv_bias, std::size_t head) {
  TorchGenerator gen(seed);
  SelfAttention_v2 sa_v2(in.d_in(), d_out, qkv_bias, gen);
  if (in.model) use_real_head(in, head, sa_v2.W_query, sa_v2.W_key, sa_v2.W_value);
  return sa_v2;
}
}  // namespace

CausalWeights::CausalWeights(Trace& t, const Inputs& in, std::size_t d_out, std::uint64_t seed, bool qkv_bias,
                             std::size_t head)
    : n(in.num_tokens()),
      scale(static_cast<float>(std::sqrt(static_cast<double>(d_out)))),
      sa_v2(seeded_sa_v2(in, d_out, seed, qkv_bias, head)),
      queries(t.lazy<Matrix>([this, in = &in] { return sa_v2.W_query.forward(in->embeddings); })),  // (n, d_out)
      keys(t.lazy<Matrix>([this, in = &in] { return sa_v2.W_key.forward(in->embeddings); })),       // (n, d_out)
      attn_scores(t.lazy<Matrix>([this] { return matmul(queries(), keys(), /*transpose_b=*/true); })),  // (n, n)
      attn_weights(t.lazy<Matrix>([this] {
        const Matrix scaled = attn_scores() / scale;  // (n, n)
        return softmax(scaled);
      })),
      mask_simple(t.lazy<Matrix>([this] { return Matrix(1.0f - mask()); })),  // (n, n): torch.tril(torch.ones(n, n))
      masked_simple(t.lazy<Matrix>([this] { return Matrix(attn_weights() * mask_simple()); })),  // (n, n)
      row_sums(t.lazy<Matrix>([this] {
        Matrix sums = xt::empty<float>({n, std::size_t{1}});  // (n, 1): keepdim=True
        for (std::size_t i = 0; i < n; ++i) sums(i, 0) = sum_of(&masked_simple()(i, 0), n);
        return sums;
      })),
      // (n, n), row_sums broadcast over columns
      masked_simple_norm(t.lazy<Matrix>([this] { return Matrix(masked_simple() / row_sums()); })),
      mask(t.lazy<Matrix>([this] { return causal_mask(n); })),                              // (n, n)
      masked(t.lazy<Matrix>([this] { return Matrix(mask_future(AnyTensor(attn_scores()))); })),  // (n, n)
      causal_attn_weights(t.lazy<Matrix>([this] {
        const Matrix masked_scaled = masked() / scale;  // (n, n)
        return softmax(masked_scaled);
      })) {}

Trace run_causal(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(causal_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::OneHead, t);
  check_elements("the (b, num_tokens, num_tokens) attention weights", {cfg.batch, in.num_tokens(), in.num_tokens()});
  const std::uint64_t seed_v2 = cfg.seed.value_or(789);
  const std::uint64_t seed_ca = cfg.seed.value_or(123);
  const std::string bias_arg = cfg.qkv_bias ? ", qkv_bias=True" : "";
  const std::size_t b = cfg.batch, n = in.num_tokens(), d_out = cfg.d_out;
  t.config["manual_seeds"] = {seed_v2, seed_ca};
  if (in.model) t.notes.push_back(model_note(in, cfg, ModelUse::OneHead));
  const std::string real = in.model ? "\n# --model: the head's rows of the real c_attn, loaded into its layers" : "";

  const CausalWeights w(t, in, d_out, seed_v2, cfg.qkv_bias, cfg.head.value_or(0));
  t.add("queries", "Queries of SelfAttention_v2",
        "We reuse the SelfAttention_v2 of section 3.4.2 to get attention weights to mask.",
        "torch.manual_seed(" + std::to_string(seed_v2) + ")\nsa_v2 = SelfAttention_v2(d_in, d_out" + bias_arg +
            ")" + real + "\nqueries = sa_v2.W_query(inputs)",
        {n, d_out}, w.queries);
  t.add("keys", "Keys of SelfAttention_v2", "Every token projected by W_key.", "keys = sa_v2.W_key(inputs)",
        {n, d_out}, w.keys);
  t.add("attn_scores", "Attention scores", "Every query against every key, before any masking.",
        "attn_scores = queries @ keys.T", {n, n}, w.attn_scores);
  t.add("attn_weights", "Unmasked attention weights",
        "Each row still spreads weight over all tokens, including those that come later in the text.",
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", {n, n}, w.attn_weights)
      .show_heatmap(false);
  t.add("mask_simple", "A lower-triangular mask",
        "Ones on and below the diagonal: row i keeps tokens 0..i, the ones a language model may look at when it "
        "predicts the next word.",
        "context_length = attn_scores.shape[0]\nmask_simple = torch.tril(torch.ones(context_length, context_length))",
        {n, n}, w.mask_simple);
  t.add("masked_simple", "Weights with the future zeroed",
        "Multiplying by the mask zeroes every weight above the diagonal; the rows no longer sum to 1.",
        "masked_simple = attn_weights * mask_simple", {n, n}, w.masked_simple).show_heatmap(true);
  t.add("row_sums", "What each row sums to now", "keepdim=True keeps a column so it divides row by row.",
        "row_sums = masked_simple.sum(dim=-1, keepdim=True)", {n, 1}, w.row_sums);
  t.add("masked_simple_norm", "Renormalised masked weights",
        "Dividing each row by its sum makes it a distribution again over the visible tokens only.",
        "masked_simple_norm = masked_simple / row_sums", {n, n}, w.masked_simple_norm).show_heatmap(true);
  t.add("mask", "The mask above the diagonal", "Ones mark the future positions to hide.",
        "mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)", {n, n}, w.mask);
  t.add("masked", "Scores with -inf in the future",
        "The efficient trick: set future scores to -inf before softmax. exp(-inf) is 0, so they get no weight.",
        "masked = attn_scores.masked_fill(mask.bool(), -torch.inf)", {n, n}, w.masked).show_heatmap(true);
  t.add("causal_attn_weights", "Causal attention weights",
        "One softmax now gives the same weights as zeroing and renormalising, in a single step.",
        "attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)", {n, n}, w.causal_attn_weights)
      .show_heatmap(true);

  const BatchStep batch(t, in.embeddings, b);  // (b, num_tokens, d_in)

  TorchGenerator gen(seed_ca);
  CausalAttention ca(in.d_in(), d_out, cfg.dropout, cfg.qkv_bias, gen);
  if (in.model) use_real_head(in, cfg.head.value_or(0), ca.W_query, ca.W_key, ca.W_value);
  const std::string ctor = "CausalAttention(d_in, d_out, context_length, " + py_float(cfg.dropout) +
                           bias_arg + ")";
  t.modules.push_back({"ca", ctor, ca.num_parameters()});
  add_linear_steps(t, "ca.W_query", ca.W_query, "projects each token to its query");
  add_linear_steps(t, "ca.W_key", ca.W_key, "projects each token to its key");
  add_linear_steps(t, "ca.W_value", ca.W_value, "projects each token to its value");
  add_num_params_step(t, "ca", ca.num_parameters());
  // One forward pass: its dropout draws from gen after the parameters, as ca(batch) does.
  const auto pass = t.lazy<CausalAttention::Pass>([&] { return ca.attend(batch(), gen, cfg.dropout_rng); });
  t.holds(CausalAttention::pass_numbers(b, n, d_out));
  t.add("ca_attn_weights", "CausalAttention's weights, after dropout",
        "Inside the module: the masked softmax of every sequence in the batch, then dropout (none at p = 0).",
        "attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1))", {b, n, n},
        [&] { return pass().attn_weights; })
      .show_heatmap(true);
  t.add("context_vecs", "Context vectors of CausalAttention",
        "One context vector per token and sequence: (batch, num_tokens, d_out). Each depends only on its token and "
        "the ones before it.",
        "torch.manual_seed(" + std::to_string(seed_ca) + ")\ncontext_length = batch.shape[1]\nca = " + ctor + real +
            "\ncontext_vecs = ca(batch)",
        {b, n, d_out}, [&] { return pass().context_vec; });
  t.resolve();
  return t;
}

Lesson causal_lesson() {
  return {causal_info(),
          {{{{Opt::DOut, "Output dimension of SelfAttention_v2 and CausalAttention"},
             {Opt::Dropout, "Dropout probability inside CausalAttention"},
             {Opt::DropoutRng, ""},
             {Opt::Batch, ""},
             {Opt::Seed, seed_help("789 for sa_v2, 123 for CausalAttention")},
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
