// attn feed-forward — 4.3 Implementing a feed forward network with GELU activations. The book's FeedForward on
// torch.rand(2, 3, emb_dim): each token's vector expanded to 4 * emb_dim, through GELU, and projected back.
#include "core/limits.hpp"
#include "lessons/chapter4.hpp"
#include "lessons/lessons.hpp"
#include "modules/gpt.hpp"

namespace attn {

static LessonInfo feed_forward_info() { return LessonText::info("feed-forward", "4.3"); }

namespace {

// torch.manual_seed(seed); ffn = FeedForward(cfg); x = torch.rand(2, 3, emb_dim): the module, then its input.
struct Example {
  FeedForward ffn;
  AnyTensor x;  // (2, 3, emb_dim)
};

Example make_example(std::uint64_t seed, std::size_t emb_dim) {
  TorchGenerator gen(seed);
  FeedForward ffn(emb_dim, gen);
  AnyTensor x = rand(gen, {2, 3, emb_dim});  // (2, 3, emb_dim)
  return {std::move(ffn), std::move(x)};
}

}  // namespace

ResolvedTrace run_feed_forward(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  Trace t(feed_forward_info(), in, sel);
  t.show_inputs = false;
  t.gpt_classes = true;
  const std::uint64_t seed = cfg.seed.value_or(123);
  const std::size_t emb = cfg.emb_dim, hidden = 4 * cfg.emb_dim;
  check_elements("the feed-forward network's (4 * emb_dim, emb_dim) weight", {4, emb, emb});
  t.config["manual_seeds"] = {seed};
  LessonText text(t, "feed-forward");
  text.set("seed", seed).set("emb_dim", emb).set("hidden", hidden);
  const std::size_t params = 2 * emb * hidden + hidden + emb;
  text.set("params", text.number(params));
  // The module's weights are kept while the steps are computed; its pass's intermediates are steps.
  t.holds(saturating_sum(params, 6 * emb));

  const Node<Example> example = t.lazy<Example>(make_example, seed, emb);
  text.add("x", {2, 3, emb}, [](const Example& e) { return e.x; }, example);
  const auto pass = t.lazy<FeedForward::Pass>([](const Example& e) { return e.ffn.pass(e.x); }, example);
  text.add("expanded", {2, 3, hidden}, [](const FeedForward::Pass& p) { return p.expanded; }, pass);  // (2, 3, 4 * emb_dim)
  text.add("activated", {2, 3, hidden}, [](const FeedForward::Pass& p) { return p.activated; }, pass);  // (2, 3, 4 * emb_dim)
  text.add("out", {2, 3, emb}, [](const FeedForward::Pass& p) { return p.out; }, pass);  // (2, 3, emb_dim)
  add_num_params_step(text, "ffn", params);
  return t.resolve();
}

Lesson feed_forward_lesson() {
  LessonConfig book;
  book.emb_dim = 768;  // GPT_CONFIG_124M["emb_dim"]
  return {feed_forward_info(),
          {chapter4_mode({{Opt::EmbDim, option_help("feed-forward", "emb_dim")},
                          {Opt::Seed, seed_help(option_help("feed-forward", "seed"))}},
                         book, run_feed_forward)},
          // Runs that reach its largest allocations (tests/test_memory.cpp), and its largest under the budget.
          MemoryRuns{{{}, {"--emb-dim", "1536"}}, {"--emb-dim", "1536"}}};
}

}  // namespace attn
