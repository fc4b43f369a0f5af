// attn gqa — grouped-query attention (rasbt/LLMs-from-scratch, ch04/04_gqa). Query heads share fewer
// key/value heads: fewer parameters and a smaller KV cache, nearly the same attention.

#include "modules/attention.hpp"
#include "lessons/lessons.hpp"
#include "lessons/multi_head.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo gqa_info() {
  return {"gqa", "ch04/04_gqa", "Grouped-query attention", "GroupedQueryAttention: several query heads share each key/value head"};
}

Trace run_gqa(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
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

  const BatchStep batch(t, in.embeddings, b);  // (b, num_tokens, d_in)

  TorchGenerator gen(seed);
  const GroupedQueryAttention gqa(in.d_in(), cfg.d_out, cfg.dropout, h, kv, cfg.qkv_bias, gen);
  t.modules.push_back({"gqa", ctor, gqa.num_parameters()});
  std::string sharing;
  for (std::size_t g = 0; g < kv; ++g) {
    sharing += (g ? "; " : "") + std::string("group ") + std::to_string(g) + " <- query heads " +
               std::to_string(g * group_size) + (group_size > 1 ? ".." + std::to_string((g + 1) * group_size - 1) : "");
  }
  t.notes.push_back("num_heads = " + std::to_string(h) + ", num_kv_groups = " + std::to_string(kv) +
                    ", group_size = " + std::to_string(group_size) + ": " + sharing);
  add_linear_steps(t, "gqa.W_key", gqa.W_key, "projects each token to the keys of the key/value heads only");
  add_linear_steps(t, "gqa.W_value", gqa.W_value, "projects each token to the values of the key/value heads");
  add_linear_steps(t, "gqa.W_query", gqa.W_query, "projects each token to the queries of all query heads");
  add_linear_steps(t, "gqa.out_proj", gqa.out_proj, "mixes the heads' concatenated outputs (no bias in this class)");
  add_num_params_step(t, "gqa", gqa.num_parameters());
  const MultiHeadSteps p(t, batch.value, gqa.W_query, gqa.W_key, gqa.W_value, gqa.out_proj, h, kv, cfg.dropout, gen,
                         cfg.dropout_rng);

  t.add("queries", "Queries: one per query head",
        "W_query projects to d_out, split into num_heads heads: (b, num_heads, num_tokens, head_dim).",
        "queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)", {b, h, n, hd},
        p.queries);
  t.add("keys", "Keys: one per key/value group",
        "W_key projects to only num_kv_groups * head_dim: (b, num_kv_groups, num_tokens, head_dim). This is what "
        "a KV cache stores, and why GQA's cache is smaller.",
        "keys = self.W_key(x).view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)", {b, kv, n, hd},
        p.keys);
  t.add("values", "Values: one per key/value group", "Likewise num_kv_groups heads.",
        "values = self.W_value(x).view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)",
        {b, kv, n, hd}, p.values);
  t.add("keys_repeated", "Keys repeated for the query heads",
        "repeat_interleave copies each group group_size times in place ([K1, K1, K2, K2], not [K1, K2, K1, K2]) so "
        "every query head has a key head.",
        "keys = keys.repeat_interleave(self.group_size, dim=1)", {b, h, n, hd}, p.keys_repeated);
  t.add("values_repeated", "Values repeated for the query heads", "The same for the values.",
        "values = values.repeat_interleave(self.group_size, dim=1)", {b, h, n, hd}, p.values_repeated);
  t.add("kv_group_of_head", "Which key/value group each query head reads",
        "Entry i is the group query head i shares: " + sharing + ".", "torch.arange(self.num_heads) // self.group_size",
        {h},
        [&] {
          Vector group_of_head = xt::empty<float>({h});  // (num_heads,)
          for (std::size_t i = 0; i < h; ++i) group_of_head(i) = static_cast<float>(i / group_size);
          return group_of_head;
        })
      .as_integer();
  t.add("attn_scores", "Attention scores of every query head", "(b, num_heads, num_tokens, num_tokens).",
        "attn_scores = queries @ keys.transpose(2, 3)", {b, h, n, n}, p.attn_scores);
  t.add("masked", "Scores with the future masked", "The causal mask, the same for every head.",
        "attn_scores = attn_scores.masked_fill(mask, -torch.inf)", {b, h, n, n}, p.masked)
      .show_heatmap(true);
  t.add("attn_weights", "Attention weights of every query head",
        "Heads that share keys still differ, because their queries differ.",
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", {b, h, n, n},
        p.attn_weights)
      .show_heatmap(true);
  t.add("attn_weights_dropout", "After dropout", "Dropout on the weights (the same weights when p = 0).",
        "attn_weights = self.dropout(attn_weights)", {b, h, n, n}, p.attn_weights_dropout)
      .show_heatmap(true);
  t.add("context_vec", "Heads combined", "Weights times values per head, heads concatenated per token.",
        "context_vec = (attn_weights @ values).transpose(1, 2)\n"
        "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
        {b, n, cfg.d_out}, p.context_combined);
  t.add("context_vecs", "Context vectors after out_proj", "The output projection (no bias in this class).",
        "torch.manual_seed(" + std::to_string(seed) + ")\ngqa = " + ctor +
            "\ncontext_vecs = gqa(batch)  # context_vec = self.out_proj(context_vec)",
        {b, n, cfg.d_out}, p.context_vecs);
  t.resolve();
  return t;
}

Lesson gqa_lesson() {
  LessonConfig book;  // GroupedQueryAttention(d_in, d_out=4, num_heads=4, num_kv_groups=2)
  book.d_out = 4;
  book.heads = 4;
  book.kv_groups = 2;
  LessonMode lesson{{{Opt::Heads, ""},
                     {Opt::KvGroups, ""},
                     {Opt::DOut, "Output dimension of the whole module, split over the query heads"},
                     {Opt::Dropout, "Dropout probability on the attention weights"},
                     {Opt::DropoutRng, ""},
                     {Opt::Batch, ""},
                     {Opt::Seed, seed_help("123")},
                     {Opt::QkvBias, ""}},
                    book,
                    run_gqa};
  lesson.takes_model = false;
  lesson.no_model_reason = "GroupedQueryAttention shares each key/value head among several query heads, and GPT-2 "
                           "has none to share: every one of its heads has its own keys and values (attn mha --model "
                           "shows them)";
  // The memory estimate began here; attn kv-cache --estimate is the same report.
  const LessonMode kv_cache = kv_cache_estimate_mode(
      gqa_info(), Opt::KvCache,
      "Instead of the lesson: the KV-cache memory of MHA vs GQA for a model, as attn kv-cache --estimate (defaults: a "
      "Llama-like 4096-dim, 32-head, 32-layer model with 8 key/value heads, 32,768 tokens, batch 1, bf16)");
  return {gqa_info(), {lesson, kv_cache},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "512x64", "--d-out", "64", "--heads", "8", "--kv-groups", "2", "--batch", "2"}},
                     {"--d-out", "16", "--heads", "4", "--kv-groups", "2"}}};
}

}  // namespace attn
