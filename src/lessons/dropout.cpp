// attn dropout — 3.5.2 Masking additional attention weights with dropout. During training, dropout
// zeroes a random share p of the attention weights and scales the rest by 1 / (1 - p).
#include "core/nn.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo dropout_info() {
  return {"dropout", "3.5.2", "Masking additional attention weights with dropout", "Dropout on a matrix of ones and on the causal attention weights"};
}

Trace run_dropout(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(dropout_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::OneHead, t);
  const std::uint64_t seed_v2 = cfg.seed.value_or(789);
  const std::uint64_t seed_drop = cfg.seed.value_or(123);
  const std::size_t n = in.num_tokens();
  const std::string p = py_float(cfg.dropout);
  t.config["manual_seeds"] = {seed_v2, seed_drop, seed_drop};
  t.notes.push_back("dropout: p = " + p + ", masks drawn as PyTorch builds " +
                    (cfg.dropout_rng == DropoutRng::Mkl ? "with MKL do (--dropout-rng mkl)"
                                                        : "without MKL do (--dropout-rng default, the book's)"));

  if (in.model) t.notes.push_back(model_note(in, cfg, ModelUse::OneHead));
  const CausalWeights w(t, in, cfg.d_out, seed_v2, cfg.qkv_bias, cfg.head.value_or(0));
  t.add("causal_attn_weights", "The causal attention weights of 3.5.1",
        "What dropout will be applied to: each row sums to 1 over the visible tokens.",
        "torch.manual_seed(" + std::to_string(seed_v2) +
            ")\nsa_v2 = SelfAttention_v2(d_in, d_out)\n# ... masked as in `attn causal`\n"
            "attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1)",
        {n, n}, w.causal_attn_weights)
      .show_heatmap(true);

  // Each dropout call is reseeded, so neither depends on the other's draws.
  t.add("dropout_ones", "Dropout on a matrix of ones",
        "Each entry is kept with probability 1 - p and then scaled by 1 / (1 - p) = " + py_float(1.0 / (1.0 - cfg.dropout)) +
            ", so the expected value of every entry stays 1; the others become 0.",
        "torch.manual_seed(" + std::to_string(seed_drop) + ")\ndropout = torch.nn.Dropout(" + p +
            ")\nexample = torch.ones(" + std::to_string(n) + ", " + std::to_string(n) + ")\nprint(dropout(example))",
        {n, n},
        [&] {
          TorchGenerator gen(seed_drop);
          const Matrix ones = xt::ones<float>({n, n});  // (n, n)
          return dropout(AnyTensor(ones), cfg.dropout, gen, cfg.dropout_rng);
        })
      .show_heatmap(false, /*tokens_on_axes=*/false);

  t.add("dropout_attn_weights", "Dropout on the attention weights",
        "Reseeded, the same positions are dropped; the kept weights are scaled up, so rows no longer sum to 1 "
        "but their expected sums do. Dropout is only used in training.",
        "torch.manual_seed(" + std::to_string(seed_drop) + ")\nprint(dropout(attn_weights))", {n, n},
        [&] {
          TorchGenerator gen(seed_drop);
          return dropout(AnyTensor(w.causal_attn_weights()), cfg.dropout, gen, cfg.dropout_rng);
        })
      .show_heatmap(true);
  t.resolve();
  return t;
}

Lesson dropout_lesson() {
  LessonConfig book;
  book.dropout = 0.5;
  return {dropout_info(),
          {{{{Opt::Dropout, "Dropout probability p"},
             {Opt::DropoutRng, ""},
             {Opt::DOut, "Output dimension of the SelfAttention_v2 whose weights are dropped"},
             {Opt::Seed, seed_help("789 for sa_v2, 123 before each dropout call")},
             {Opt::QkvBias, ""},
             {Opt::Head, ""}},
            book,
            run_dropout}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "2048x16", "--d-out", "16"}},
                     {"--d-out", "16"}}};
}

}  // namespace attn
