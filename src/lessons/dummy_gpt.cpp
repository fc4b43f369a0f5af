// attn dummy-gpt — 4.1 Coding an LLM architecture. The book's DummyGPTModel on the tokenized batch "Every effort
// moves you" / "Every day holds a": the outline of the GPT model with its blocks and final norm as placeholders
// that return their input, so the logits come from the embeddings and the output head alone.
#include "core/limits.hpp"
#include "lessons/chapter4.hpp"
#include "lessons/lessons.hpp"
#include "modules/gpt.hpp"

namespace attn {

static LessonInfo dummy_gpt_info() { return LessonText::info("dummy-gpt", "4.1"); }

ResolvedTrace run_dummy_gpt(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  const GptConfig model = gpt_config(cfg);
  GptConfig shape = model;
  shape.n_heads = 1;  // the placeholder blocks have no attention: any emb_dim will do
  check_model_shape(shape);
  const Batch batch = book_batch();
  const std::size_t b = batch.size(), n = batch.front().size(), emb = model.emb_dim, vocab = model.vocab_size;
  check_context_length(model, n);
  Trace t(dummy_gpt_info(), in, sel);
  t.show_inputs = false;
  t.gpt_classes = true;  // and DummyGPTModel, which data/notebook/gpt.py defines too
  const std::uint64_t seed = cfg.seed.value_or(123);
  t.config["manual_seeds"] = {seed};
  LessonText text(t, "dummy-gpt");
  set_config_values(text, model).set("seed", seed).set("ids", batch_literal(batch)).set("vocab_size_1", vocab - 1);
  text.set("total_params", text.number(model.dummy_parameters()));
  // The model's weights are kept while the steps are computed, and so is its pass.
  const std::size_t bn = b * n;
  t.holds(saturating_sum(model.dummy_parameters(),
                         saturating_sum(saturating_product({4, bn, emb}), saturating_product({bn, vocab}))));

  const auto seeded = t.lazy<SeededModel<DummyGPTModel>>(build_seeded<DummyGPTModel>, seed, model);
  const Node<Batch> batch_node = t.keep<Batch>(batch);
  const auto pass = t.lazy<DummyGPTModel::Pass>(train_pass<DummyGPTModel>, seeded, batch_node, cfg.dropout_rng);
  using Pass = DummyGPTModel::Pass;
  add_embedding_steps(text, batch_node, pass, emb);
  text.add("logits", {b, n, vocab}, [](const Pass& p) { return p.logits; }, pass);  // (b, num_tokens, vocab_size)
  return t.resolve();
}

Lesson dummy_gpt_lesson() {
  return {dummy_gpt_info(),
          {chapter4_mode({{Opt::EmbDim, option_help("gpt", "emb_dim")},
                          {Opt::ContextLength, option_help("gpt", "context_length")},
                          {Opt::DropRate, option_help("dummy-gpt", "drop_rate")},
                          {Opt::DropoutRng, ""},
                          {Opt::Seed, seed_help(option_help("gpt", "seed"))}},
                         gpt_config_124m(), run_dummy_gpt)},
          // The default is GPT_CONFIG_124M's embeddings and output head: 78M parameters.
          MemoryRuns{{{}, {"--emb-dim", "64"}}, {"--emb-dim", "64"}}};
}

}  // namespace attn
