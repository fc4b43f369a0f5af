// attn gqa — grouped-query attention (rasbt/LLMs-from-scratch, ch04/04_gqa). Query heads share fewer
// key/value heads: fewer parameters and a smaller KV cache, nearly the same attention.

#include "modules/attention.hpp"
#include "lessons/lessons.hpp"
#include "lessons/multi_head.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo gqa_info() { return LessonText::info("gqa", "ch04/04_gqa"); }

ResolvedTrace run_gqa(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  check_heads(cfg, true);
  check_elements("the (b, num_heads, num_tokens, num_tokens) attention weights",
                 {cfg.batch, cfg.heads, in.num_tokens(), in.num_tokens()});
  check_elements("the (b, num_tokens, d_out) projections", {cfg.batch, in.num_tokens(), cfg.d_out});
  const std::uint64_t seed = cfg.seed.value_or(123);
  const std::size_t h = cfg.heads, kv = cfg.kv_groups, group_size = h / kv;
  const std::size_t b = cfg.batch, n = in.num_tokens(), hd = cfg.d_out / h;
  Trace t(gqa_info(), in, sel);
  t.config["manual_seeds"] = {seed};
  const std::string ctor = "GroupedQueryAttention(d_in, d_out, " + py_float(cfg.dropout) + ", num_heads=" +
                           std::to_string(h) + ", num_kv_groups=" + std::to_string(kv) +
                           (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")";

  LessonText text(t, "gqa");
  text.set("seed", seed).set("ctor", ctor).set("h", h).set("kv", kv).set("group_size", group_size).set("d_out", cfg.d_out);
  const Node<Tensor3> batch = add_batch_step(text, b);  // (b, num_tokens, d_in)

  const State<TorchGenerator> gen = t.state(TorchGenerator(seed));
  const Node<GroupedQueryAttention> gqa =
      t.keep(GroupedQueryAttention(in.d_in(), cfg.d_out, cfg.dropout, h, kv, cfg.qkv_bias, *gen));
  t.modules.push_back({"gqa", ctor, gqa->num_parameters()});
  std::string sharing;
  for (std::size_t g = 0; g < kv; ++g) {
    const std::string first = std::to_string(g * group_size);
    sharing += (g ? "; " : "") + text.with({{"g", std::to_string(g)},
                                           {"first", group_size > 1 ? first + ".." + std::to_string((g + 1) * group_size - 1) : first}})
                                     .phrase("group");
  }
  text.set("sharing", sharing);
  t.notes.push_back(text.phrase("heads_note"));
  add_linear_steps(text, "gqa.W_key", gqa->W_key, text.phrase("role_key"));
  add_linear_steps(text, "gqa.W_value", gqa->W_value, text.phrase("role_value"));
  add_linear_steps(text, "gqa.W_query", gqa->W_query, text.phrase("role_query"));
  add_linear_steps(text, "gqa.out_proj", gqa->out_proj, text.phrase("role_out_proj"));
  text.run_first("gqa.W_key.weight", text.phrase("notebook_module"));
  add_num_params_step(text, "gqa", gqa->num_parameters());
  using GQA = GroupedQueryAttention;
  const MultiHeadSteps p(t, batch, gqa.part(&GQA::W_query), gqa.part(&GQA::W_key), gqa.part(&GQA::W_value),
                         gqa.part(&GQA::out_proj), h, kv, cfg.dropout, gen, cfg.dropout_rng);

  text.add("queries", {b, h, n, hd},
        p.queries);
  text.add("keys", {b, kv, n, hd},
        p.keys);
  text.add("values", {b, kv, n, hd}, p.values);
  text.add("keys_repeated", {b, h, n, hd}, p.keys_repeated);
  text.add("values_repeated", {b, h, n, hd}, p.values_repeated);
  text.add("kv_group_of_head", {h}, [](std::size_t h, std::size_t group_size) {
    Vector group_of_head = xt::empty<float>({h});  // (num_heads,)
    for (std::size_t i = 0; i < h; ++i) group_of_head(i) = static_cast<float>(i / group_size);
    return group_of_head;
  }, h, group_size)
      .as_integer();
  text.add("attn_scores", {b, h, n, n}, p.attn_scores);
  text.add("masked", {b, h, n, n}, p.masked)
      .show_heatmap(true);
  text.add("attn_weights", {b, h, n, n},
        p.attn_weights)
      .show_heatmap(true);
  text.add("attn_weights_dropout", {b, h, n, n}, p.attn_weights_dropout)
      .show_heatmap(true);
  text.add("context_vec", {b, n, cfg.d_out}, p.context_combined);
  text.add("context_vecs", {b, n, cfg.d_out}, p.context_vecs);
  return t.resolve();
}

Lesson gqa_lesson() {
  LessonConfig book;  // GroupedQueryAttention(d_in, d_out=4, num_heads=4, num_kv_groups=2)
  book.d_out = 4;
  book.heads = 4;
  book.kv_groups = 2;
  LessonMode lesson{{{Opt::Heads, ""},
                     {Opt::KvGroups, ""},
                     {Opt::DOut, option_help("gqa", "d_out")},
                     {Opt::Dropout, option_help("gqa", "dropout")},
                     {Opt::DropoutRng, ""},
                     {Opt::Batch, ""},
                     {Opt::Seed, seed_help(option_help("gqa", "seeds"))},
                     {Opt::QkvBias, ""}},
                    book,
                    run_gqa};
  lesson.takes_model = false;
  lesson.no_model_reason = option_help("gqa", "no_model");
  // The memory estimate began here; attn kv-cache --estimate is the same report.
  const LessonMode kv_cache = kv_cache_estimate_mode(gqa_info(), Opt::KvCache, option_help("gqa", "kv_cache"));
  return {gqa_info(), {lesson, kv_cache},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "512x64", "--d-out", "64", "--heads", "8", "--kv-groups", "2", "--batch", "2"}},
                     {"--d-out", "16", "--heads", "4", "--kv-groups", "2"}}};
}

}  // namespace attn
