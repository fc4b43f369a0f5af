// attn dropout — 3.5.2 Masking additional attention weights with dropout. During training, dropout
// zeroes a random share p of the attention weights and scales the rest by 1 / (1 - p).
#include "core/nn.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo dropout_info() { return LessonText::info("dropout", "3.5.2"); }

ResolvedTrace run_dropout(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(dropout_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::OneHead, t);
  const std::uint64_t seed_v2 = cfg.seed.value_or(789);
  const std::uint64_t seed_drop = cfg.seed.value_or(123);
  const std::size_t n = in.num_tokens();
  const std::string p = py_float(cfg.dropout);
  t.config["manual_seeds"] = {seed_v2, seed_drop, seed_drop};
  LessonText text(t, "dropout");
  text.set("p", p).set("n", n).set("seed_v2", seed_v2).set("seed_drop", seed_drop).set("d_out", cfg.d_out);
  text.set("bias_arg", cfg.qkv_bias ? ", qkv_bias=True" : "");
  text.set("real_sa_v2", real_head_run(text, in, "sa_v2", cfg.head.value_or(0)));
  text.set("scale", py_float(1.0 / (1.0 - cfg.dropout)));
  t.notes.push_back(text.phrase({"note", cfg.dropout_rng == DropoutRng::Mkl ? "mkl" : "default"}));

  if (in.model) t.notes.push_back(model_note(in, cfg, ModelUse::OneHead, t.words));
  const CausalWeights w(t, in, cfg.d_out, seed_v2, cfg.qkv_bias, cfg.head.value_or(0));
  text.add("causal_attn_weights", {n, n}, w.causal_attn_weights)
      .show_heatmap(true);

  // Each dropout call is reseeded, so neither depends on the other's draws.
  text.add("dropout_ones", {n, n}, [](std::size_t n, double p, std::uint64_t seed, DropoutRng rng) {
    TorchGenerator gen(seed);
    const Matrix ones = xt::ones<float>({n, n});  // (n, n)
    return dropout(AnyTensor(ones), p, gen, rng);
  }, n, cfg.dropout, seed_drop, cfg.dropout_rng)
      .show_heatmap(false, /*tokens_on_axes=*/false);

  text.add("dropout_attn_weights", {n, n}, [](const Matrix& causal_attn_weights, double p, std::uint64_t seed,
                                              DropoutRng rng) {
    TorchGenerator gen(seed);
    return dropout(AnyTensor(causal_attn_weights), p, gen, rng);
  }, w.causal_attn_weights, cfg.dropout, seed_drop, cfg.dropout_rng)
      .show_heatmap(true);
  return t.resolve();
}

Lesson dropout_lesson() {
  LessonConfig book;
  book.dropout = 0.5;
  return {dropout_info(),
          {{{{Opt::Dropout, option_help("dropout", "dropout")},
             {Opt::DropoutRng, ""},
             {Opt::DOut, option_help("dropout", "d_out")},
             {Opt::Seed, seed_help(option_help("dropout", "seeds"))},
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
