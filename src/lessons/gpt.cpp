// attn gpt — 4.6 Coding the GPT model. The book's GPTModel on the tokenized batch "Every effort moves you" /
// "Every day holds a", in training mode as the book calls it: the token and positional embeddings, their sum and
// its dropout, each transformer block's output, the final LayerNorm and the logits; then the parameters
// counted, with and without the output head (weight tying), and the model's size in float32.
#include "core/limits.hpp"
#include "lessons/chapter4.hpp"
#include "lessons/lessons.hpp"
#include "model/gpt2_tokenizer.hpp"
#include "modules/gpt.hpp"

#include <fmt/format.h>

namespace attn {

static LessonInfo gpt_info() { return LessonText::info("gpt", "4.6"); }

ResolvedTrace run_gpt(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  const GptConfig model = gpt_config(cfg);
  check_model_shape(model);
  const Batch batch = book_batch();
  const std::size_t b = batch.size(), n = batch.front().size(), emb = model.emb_dim, vocab = model.vocab_size;
  check_context_length(model, n);
  Trace t(gpt_info(), in, sel);
  t.show_inputs = false;
  t.gpt_classes = true;
  const std::uint64_t seed = cfg.seed.value_or(123);
  t.config["manual_seeds"] = {seed};
  LessonText text(t, "gpt");
  set_config_values(text, model).set("seed", seed).set("ids", batch_literal(batch)).set("vocab_size_1", vocab - 1);
  text.set("last", model.n_layers == 0 ? "drop_emb" : "trf_blocks_" + std::to_string(model.n_layers - 1));
  const std::size_t total_params = model.gpt_parameters(), head = vocab * emb;
  const double total_size_mb = static_cast<double>(total_params) * 4.0 / (1024.0 * 1024.0);
  text.set("total_params", text.number(total_params))
      .set("total_params_gpt2", text.number(total_params - head))
      .set("total_size_mb", fmt::format("{:.2f}", total_size_mb));
  // The model's weights are kept while the steps are computed, and so is its pass: the embeddings, each
  // block's output, the final norm and the logits; one block's own intermediates at a time besides.
  const std::size_t bn = b * n;
  t.holds(saturating_sum(total_params,
                         saturating_sum(saturating_product({model.n_layers + 5, bn, emb}), saturating_product({bn, vocab}))));
  t.needs_temporarily(saturating_sum(saturating_product({27, bn, emb}),
                                     saturating_product({4, b, model.n_heads, n, n})));

  const auto seeded = t.lazy<SeededModel<GPTModel>>(build_seeded<GPTModel>, seed, model);
  const Node<Batch> batch_node = t.keep<Batch>(batch);
  const auto pass = t.lazy<GPTModel::Pass>(train_pass<GPTModel>, seeded, batch_node, cfg.dropout_rng);
  using Pass = GPTModel::Pass;
  add_embedding_steps(text, batch_node, pass, emb);
  for (std::size_t i = 0; i < model.n_layers; ++i)
    text.with({{"i", std::to_string(i)}, {"layer", std::to_string(i + 1)},
               {"input", i == 0 ? "drop_emb" : "trf_blocks_" + std::to_string(i - 1)}})
        .add({"trf_blocks_{i}"}, {b, n, emb},
             [](const Pass& p, std::size_t i) { return p.block_outs[i]; }, pass, i);  // (b, num_tokens, emb_dim)
  text.add("final_norm", {b, n, emb}, [](const Pass& p) { return p.final_norm; }, pass);  // (b, num_tokens, emb_dim)
  text.add("out", {b, n, vocab}, [](const Pass& p) { return p.logits; }, pass);  // (b, num_tokens, vocab_size)
  add_num_params_step(text, "model", total_params, "total_params");
  add_num_params_step(text, "model", total_params - head, "total_params_gpt2");
  text.add("total_size_mb", {}, [](double mb) { return PyFloat{mb}; }, total_size_mb);  // total_params * 4 / 2^20
  return t.resolve();
}

Lesson gpt_lesson() {
  return {gpt_info(),
          {chapter4_mode({{Opt::EmbDim, option_help("gpt", "emb_dim")},
                          {Opt::Heads, option_help("gpt", "heads")},
                          {Opt::Layers, option_help("gpt", "layers")},
                          {Opt::ContextLength, option_help("gpt", "context_length")},
                          {Opt::DropRate, option_help("gpt", "drop_rate")},
                          {Opt::DropoutRng, ""},
                          {Opt::QkvBias, ""},
                          {Opt::Seed, seed_help(option_help("gpt", "seed"))}},
                         gpt_config_124m(), run_gpt)},
          // Runs that reach its largest allocations (tests/test_memory.cpp), and its largest under the budget.
          // The default is GPT_CONFIG_124M itself: 163M parameters, about 650 MB.
          MemoryRuns{{{}, {"--emb-dim", "64", "--heads", "4", "--layers", "2"}},
                     {"--emb-dim", "64", "--heads", "4", "--layers", "2"}}};
}

}  // namespace attn
