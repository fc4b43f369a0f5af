// attn block — 4.5 Connecting attention and linear layers in a transformer block. The book's TransformerBlock on
// torch.rand(2, 4, emb_dim), in training mode as the book calls it: norm1, attention, dropout, the first
// shortcut; norm2, the feed-forward network, dropout, the second shortcut. Each token's vector keeps its shape
// all the way through, which is what lets twelve such blocks be stacked. Exercise 4.1's parameter counts end it.
#include "core/limits.hpp"
#include "lessons/chapter4.hpp"
#include "lessons/lessons.hpp"
#include "modules/gpt.hpp"

namespace attn {

static LessonInfo block_info() { return LessonText::info("block", "4.5"); }

namespace {

constexpr std::size_t kBatch = 2, kTokens = 4;  // torch.rand(2, 4, emb_dim)

// torch.manual_seed(seed); x = torch.rand(2, 4, emb_dim); block = TransformerBlock(cfg): the input, then the
// module, from one generator, which the forward's dropout masks then draw from.
struct BlockExample {
  Tensor3 x;  // (2, 4, emb_dim)
  TransformerBlock block;
  TorchGenerator gen;  // as it stands after the block's parameters were drawn
};

BlockExample make_block_example(std::uint64_t seed, const GptConfig& cfg) {
  TorchGenerator gen(seed);
  AnyTensor x = rand(gen, {kBatch, kTokens, cfg.emb_dim});  // (2, 4, emb_dim)
  TransformerBlock block(cfg, gen);
  Tensor3 x3 = xt::empty<float>({kBatch, kTokens, cfg.emb_dim});
  std::copy(x.begin(), x.end(), x3.begin());
  return {std::move(x3), std::move(block), gen};
}

// output = block(x), every intermediate kept: the dropout masks drawn in the forward's order.
TransformerBlock::Pass block_forward(const BlockExample& e, DropoutRng rng) {
  TorchGenerator gen = e.gen;
  return e.block.pass(e.x, ForwardMode{&gen, rng});
}

}  // namespace

ResolvedTrace run_block(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  const GptConfig model = gpt_config(cfg);
  check_model_shape(model);
  Trace t(block_info(), in, sel);
  t.show_inputs = false;
  t.gpt_classes = true;
  const std::uint64_t seed = cfg.seed.value_or(123);
  t.config["manual_seeds"] = {seed};
  const std::size_t emb = model.emb_dim, hidden = 4 * model.emb_dim;
  LessonText text(t, "block");
  set_config_values(text, model).set("seed", seed).set("hidden", hidden);
  // The block's weights are kept while the steps are computed, and so is its pass: x, the attention's
  // projections and heads (11 tensors of b * n * emb_dim), seven more of the block's own, its four
  // (b, heads, n, n) score tensors and the feed-forward's two (b, n, 4 * emb_dim).
  const std::size_t bn = kBatch * kTokens;
  t.holds(saturating_sum(model.block_parameters(),
                         saturating_sum(saturating_product({19, bn, emb}),
                                        saturating_sum(saturating_product({2, bn, hidden}),
                                                       saturating_product({4, kBatch, model.n_heads, kTokens, kTokens})))));

  const Node<BlockExample> example = t.lazy<BlockExample>(make_block_example, seed, model);
  const auto pass = t.lazy<TransformerBlock::Pass>(block_forward, example, cfg.dropout_rng);
  using Pass = TransformerBlock::Pass;
  text.add("x", {kBatch, kTokens, emb}, [](const BlockExample& e) { return e.x; }, example);  // (2, 4, emb_dim)
  text.add("norm1", {kBatch, kTokens, emb}, [](const Pass& p) { return p.norm1; }, pass);  // (2, 4, emb_dim)
  text.add("att", {kBatch, kTokens, emb}, [](const Pass& p) { return p.att.context_vecs; }, pass);  // (2, 4, emb_dim)
  text.add("att_dropped", {kBatch, kTokens, emb}, [](const Pass& p) { return p.att_dropped; }, pass);  // (2, 4, emb_dim)
  text.add("shortcut", {kBatch, kTokens, emb}, [](const Pass& p) { return p.first_shortcut; }, pass);  // (2, 4, emb_dim)
  text.add("norm2", {kBatch, kTokens, emb}, [](const Pass& p) { return p.norm2; }, pass);  // (2, 4, emb_dim)
  text.add("ff", {kBatch, kTokens, emb}, [](const Pass& p) { return p.ff.out; }, pass);  // (2, 4, emb_dim)
  text.add("ff_dropped", {kBatch, kTokens, emb}, [](const Pass& p) { return p.ff_dropped; }, pass);  // (2, 4, emb_dim)
  text.add("output", {kBatch, kTokens, emb}, [](const Pass& p) { return p.out; }, pass);  // (2, 4, emb_dim)
  // Exercise 4.1: the two modules' parameters, counted from their shapes.
  add_num_params_step(text, "block.ff", model.feed_forward_parameters(), "ff_params");
  add_num_params_step(text, "block.att", model.attention_parameters(), "att_params");
  return t.resolve();
}

Lesson block_lesson() {
  return {block_info(),
          {chapter4_mode({{Opt::EmbDim, option_help("block", "emb_dim")},
                          {Opt::Heads, option_help("block", "heads")},
                          {Opt::DropRate, option_help("block", "drop_rate")},
                          {Opt::DropoutRng, ""},
                          {Opt::QkvBias, ""},
                          {Opt::Seed, seed_help(option_help("block", "seed"))}},
                         gpt_config_124m(), run_block)},
          // Runs that reach its largest allocations (tests/test_memory.cpp), and its largest under the budget.
          MemoryRuns{{{}, {"--emb-dim", "1536", "--heads", "1"}}, {"--emb-dim", "1536", "--heads", "1"}}};
}

}  // namespace attn
