// attn mha-wrapper — 3.6.1 Stacking multiple single-head attention layers. Several CausalAttention
// heads, each with its own weights, run side by side; their outputs are concatenated.
#include "modules/attention.hpp"
#include "lessons/lessons.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo mha_wrapper_info() { return LessonText::info("mha-wrapper", "3.6.1"); }

ResolvedTrace run_mha_wrapper(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(mha_wrapper_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::EveryHead, t);
  check_elements("the (b, num_tokens, num_tokens) attention weights of every head",
                 {cfg.heads, cfg.batch, in.num_tokens(), in.num_tokens()});
  check_elements("the heads' weights", {cfg.heads, 3, in.d_in(), cfg.d_out});
  check_elements("the (b, num_tokens, heads * d_out) context vectors", {cfg.batch, in.num_tokens(), cfg.heads, cfg.d_out});
  const std::uint64_t seed = cfg.seed.value_or(123);
  const std::size_t b = cfg.batch, n = in.num_tokens(), d_out = cfg.d_out;
  t.config["manual_seeds"] = {seed};
  const std::string ctor = "MultiHeadAttentionWrapper(d_in, d_out, context_length, " + py_float(cfg.dropout) +
                           ", num_heads=" + std::to_string(cfg.heads) + (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")";

  LessonText text(t, "mha-wrapper");
  text.set("ctor", ctor).set("seed", seed).set("b", b).set("n", n).set("d_out", d_out).set("width", cfg.heads * d_out).set("heads", cfg.heads);
  const Node<Tensor3> batch = add_batch_step(text, b);  // (b, num_tokens, d_in)

  const State<TorchGenerator> gen = t.state(TorchGenerator(seed));
  MultiHeadAttentionWrapper built(in.d_in(), cfg.d_out, cfg.dropout, cfg.heads, cfg.qkv_bias, *gen);
  if (in.model) {  // each head takes its own rows of the real c_attn (drawn first, so dropout draws as before)
    for (std::size_t h = 0; h < built.heads.size(); ++h)
      use_real_head(in, h, built.heads[h].W_query, built.heads[h].W_key, built.heads[h].W_value);
    t.notes.push_back(model_note(in, cfg, ModelUse::EveryHead, t.words));
  }
  const Node<MultiHeadAttentionWrapper> mha = t.keep(std::move(built));
  t.modules.push_back({"mha", ctor, mha->num_parameters()});
  if (!in.model) t.notes.push_back(text.phrase("heads_note"));
  for (std::size_t h = 0; h < mha->heads.size(); ++h) {
    const std::string head = "mha.heads." + std::to_string(h);
    const LessonText of_head = text.with({{"h", std::to_string(h)}});
    add_linear_steps(of_head, head + ".W_query", mha->heads[h].W_query, of_head.phrase("role_query"));
    add_linear_steps(of_head, head + ".W_key", mha->heads[h].W_key, of_head.phrase("role_key"));
    add_linear_steps(of_head, head + ".W_value", mha->heads[h].W_value, of_head.phrase("role_value"));
  }
  add_num_params_step(text, "mha", mha->num_parameters());
  std::string head_outputs;  // the notebook's names of the heads' outputs, for torch.cat
  for (std::size_t h = 0; h < mha->heads.size(); ++h) head_outputs += (h ? ", head_" : "head_") + std::to_string(h) + "_context_vec";
  text.set("head_outputs", head_outputs);
  std::string real_heads;
  for (std::size_t h = 0; h < mha->heads.size(); ++h) real_heads += real_head_run(text, in, "mha.heads[" + std::to_string(h) + "]", h);
  text.set("real_heads", real_heads);
  text.run_first("mha.heads.0.W_query.weight", text.phrase("notebook_module"));
  // The heads run one after another, each drawing its dropout mask after the one before: one lazy value.
  using Passes = std::vector<CausalAttention::Pass>;
  const auto passes = t.lazy<Passes>([](const MultiHeadAttentionWrapper& mha, const Tensor3& batch,
                                        TorchGenerator& gen, DropoutRng rng) {
    return mha.attend(batch, gen, rng);
  }, mha, batch, gen, cfg.dropout_rng);
  t.holds(saturating_product({mha->heads.size(), CausalAttention::pass_numbers(b, n, cfg.d_out)}));
  for (std::size_t h = 0; h < mha->heads.size(); ++h) {
    const LessonText of_head = text.with({{"h", std::to_string(h)}});
    of_head.add("head_{h}_attn_weights", {b, n, n}, [](const Passes& passes, std::size_t h) {
      return passes[h].attn_weights;
    }, passes, h)
        .show_heatmap(true);
    of_head.add("head_{h}_context_vec", {b, n, d_out}, [](const Passes& passes, std::size_t h) {
      return passes[h].context_vec;
    }, passes, h);
  }
  text.add("context_vecs", {b, n, cfg.heads * d_out}, MultiHeadAttentionWrapper::concat, passes);
  return t.resolve();
}

Lesson mha_wrapper_lesson() {
  return {mha_wrapper_info(),
          {{{{Opt::Heads, ""},
             {Opt::DOut, option_help("mha-wrapper", "d_out")},
             {Opt::Dropout, option_help("mha-wrapper", "dropout")},
             {Opt::DropoutRng, ""},
             {Opt::Batch, ""},
             {Opt::Seed, seed_help(option_help("mha-wrapper", "seeds"))},
             {Opt::QkvBias, ""}},
            LessonConfig{},
            run_mha_wrapper}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "512x64", "--d-out", "8", "--heads", "8", "--batch", "4"}},
                     {"--d-out", "8", "--heads", "4"}}};
}

}  // namespace attn
