// attn causal — 3.5.1 Applying a causal attention mask, and 3.5.3 Implementing a compact causal
// attention class. A token may only attend to itself and the tokens before it: first by zeroing and
// renormalising weights, then the better way with -inf scores, then the CausalAttention module.
#include <cmath>

#include "core/attention.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo causal_info() {
  return {"causal", "3.5.1, 3.5.3", "Hiding future words with causal attention", "Mask the future: zero-and-renormalise, the -inf mask, and the CausalAttention class over a batch"};
}

CausalWeights causal_weights(const Inputs& in, std::size_t d_out, std::uint64_t seed, bool qkv_bias) {
  const std::size_t n = in.num_tokens();
  TorchGenerator gen(seed);
  const SelfAttention_v2 sa_v2(in.d_in(), d_out, qkv_bias, gen);
  CausalWeights w;
  w.queries = sa_v2.W_query.forward(in.embeddings);             // (n, d_out)
  w.keys = sa_v2.W_key.forward(in.embeddings);                  // (n, d_out)
  w.attn_scores = matmul(w.queries, w.keys, /*transpose_b=*/true);  // (n, n)
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(d_out)));
  Matrix scaled = w.attn_scores / scale;  // (n, n)
  w.attn_weights = softmax(scaled);       // (n, n)
  w.mask = causal_mask(n);                // (n, n)
  w.mask_simple = 1.0f - w.mask;          // (n, n): torch.tril(torch.ones(n, n))
  w.masked_simple = w.attn_weights * w.mask_simple;  // (n, n)
  w.row_sums = xt::empty<float>({n, std::size_t{1}});  // (n, 1): keepdim=True
  for (std::size_t i = 0; i < n; ++i) w.row_sums(i, 0) = sum_of(&w.masked_simple(i, 0), n);
  w.masked_simple_norm = w.masked_simple / w.row_sums;  // (n, n), row_sums broadcast over columns
  w.masked = mask_future(AnyTensor(w.attn_scores));     // (n, n)
  Matrix masked_scaled = w.masked / scale;              // (n, n)
  w.causal_attn_weights = softmax(masked_scaled);       // (n, n)
  return w;
}

Trace run_causal(const Inputs& in, const LessonConfig& cfg) {
  check_elements("the (b, num_tokens, num_tokens) attention weights", {cfg.batch, in.num_tokens(), in.num_tokens()});
  const std::uint64_t seed_v2 = cfg.seed.value_or(789);
  const std::uint64_t seed_ca = cfg.seed.value_or(123);
  const std::string bias_arg = cfg.qkv_bias ? ", qkv_bias=True" : "";
  Trace t(causal_info(), in);
  t.config["manual_seeds"] = {seed_v2, seed_ca};

  const CausalWeights w = causal_weights(in, cfg.d_out, seed_v2, cfg.qkv_bias);
  t.add("queries", "Queries of SelfAttention_v2",
        "We reuse the SelfAttention_v2 of section 3.4.2 to get attention weights to mask.",
        "torch.manual_seed(" + std::to_string(seed_v2) + ")\nsa_v2 = SelfAttention_v2(d_in, d_out" + bias_arg +
            ")\nqueries = sa_v2.W_query(inputs)",
        w.queries);
  t.add("keys", "Keys of SelfAttention_v2", "Every token projected by W_key.", "keys = sa_v2.W_key(inputs)", w.keys);
  t.add("attn_scores", "Attention scores", "Every query against every key, before any masking.",
        "attn_scores = queries @ keys.T", w.attn_scores);
  t.add("attn_weights", "Unmasked attention weights",
        "Each row still spreads weight over all tokens, including those that come later in the text.",
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", w.attn_weights).show_heatmap(false);
  t.add("mask_simple", "A lower-triangular mask",
        "Ones on and below the diagonal: row i keeps tokens 0..i, the ones a language model may look at when it "
        "predicts the next word.",
        "context_length = attn_scores.shape[0]\nmask_simple = torch.tril(torch.ones(context_length, context_length))",
        w.mask_simple);
  t.add("masked_simple", "Weights with the future zeroed",
        "Multiplying by the mask zeroes every weight above the diagonal; the rows no longer sum to 1.",
        "masked_simple = attn_weights * mask_simple", w.masked_simple).show_heatmap(true);
  t.add("row_sums", "What each row sums to now", "keepdim=True keeps a column so it divides row by row.",
        "row_sums = masked_simple.sum(dim=-1, keepdim=True)", w.row_sums);
  t.add("masked_simple_norm", "Renormalised masked weights",
        "Dividing each row by its sum makes it a distribution again over the visible tokens only.",
        "masked_simple_norm = masked_simple / row_sums", w.masked_simple_norm).show_heatmap(true);
  t.add("mask", "The mask above the diagonal", "Ones mark the future positions to hide.",
        "mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)", w.mask);
  t.add("masked", "Scores with -inf in the future",
        "The efficient trick: set future scores to -inf before softmax. exp(-inf) is 0, so they get no weight.",
        "masked = attn_scores.masked_fill(mask.bool(), -torch.inf)", w.masked).show_heatmap(true);
  t.add("causal_attn_weights", "Causal attention weights",
        "One softmax now gives the same weights as zeroing and renormalising, in a single step.",
        "attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)", w.causal_attn_weights).show_heatmap(true);

  const Tensor3 batch = add_batch_step(t, in.embeddings, cfg.batch);  // (b, num_tokens, d_in)

  TorchGenerator gen(seed_ca);
  const CausalAttention ca(in.d_in(), cfg.d_out, cfg.dropout, cfg.qkv_bias, gen);
  const std::string ctor = "CausalAttention(d_in, d_out, context_length, " + py_float(cfg.dropout) +
                           bias_arg + ")";
  t.modules.push_back({"ca", ctor, ca.num_parameters()});
  add_linear_steps(t, "ca.W_query", ca.W_query, "projects each token to its query");
  add_linear_steps(t, "ca.W_key", ca.W_key, "projects each token to its key");
  add_linear_steps(t, "ca.W_value", ca.W_value, "projects each token to its value");
  const CausalAttention::Pass pass = ca.attend(batch, gen, cfg.dropout_rng);
  t.add("ca_attn_weights", "CausalAttention's weights, after dropout",
        "Inside the module: the masked softmax of every sequence in the batch, then dropout (none at p = 0).",
        "attn_weights = self.dropout(torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1))", pass.attn_weights).show_heatmap(true);
  t.add("context_vecs", "Context vectors of CausalAttention",
        "One context vector per token and sequence: (batch, num_tokens, d_out). Each depends only on its token and "
        "the ones before it.",
        "torch.manual_seed(" + std::to_string(seed_ca) + ")\ncontext_length = batch.shape[1]\nca = " + ctor +
            "\ncontext_vecs = ca(batch)",
        pass.context_vec);
  return t;
}

Lesson causal_lesson() {
  return {causal_info(),
          {{{{Opt::DOut, "Output dimension of SelfAttention_v2 and CausalAttention"},
             {Opt::Dropout, "Dropout probability inside CausalAttention"},
             {Opt::DropoutRng, ""},
             {Opt::Batch, ""},
             {Opt::Seed, seed_help("789 for sa_v2, 123 for CausalAttention")},
             {Opt::QkvBias, ""}},
            LessonConfig{},
            run_causal}}};
}

}  // namespace attn
