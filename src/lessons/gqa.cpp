// attn gqa — grouped-query attention (rasbt/LLMs-from-scratch, ch04/04_gqa). Query heads share fewer
// key/value heads: fewer parameters and a smaller KV cache, nearly the same attention.
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/attention.hpp"
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

Trace run_kv_cache(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  if (cfg.emb_dim % cfg.heads != 0)
    throw UsageError("--emb-dim " + std::to_string(cfg.emb_dim) + " is not divisible by --heads " +
                     std::to_string(cfg.heads));
  if (cfg.heads % cfg.kv_groups != 0)
    throw UsageError("--heads " + std::to_string(cfg.heads) + " is not divisible by --kv-groups " +
                     std::to_string(cfg.kv_groups));
  const std::size_t bytes_per_elem = bytes_per_element(cfg.dtype);
  const std::size_t head_dim = cfg.emb_dim / cfg.heads;
  // bytes = batch x context x head_dim x layers x 2 (keys and values) x bytes_per_elem x kv_heads
  const auto cache_bytes = [&](std::size_t kv_heads) {
    const std::size_t bytes =
        saturating_product({cfg.batch, cfg.context_length, head_dim, cfg.layers, 2, bytes_per_elem, kv_heads});
    if (bytes == std::numeric_limits<std::size_t>::max()) throw UsageError("the KV cache of this model overflows 2^64 bytes");
    return bytes;
  };
  const std::size_t mha = cache_bytes(cfg.heads), gqa = cache_bytes(cfg.kv_groups);
  const double ratio = static_cast<double>(mha) / static_cast<double>(gqa);
  const double savings = 100.0 * (1.0 - static_cast<double>(gqa) / static_cast<double>(mha));
  const auto fixed = [](double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };

  Trace t(gqa_info(), in, sel);
  t.info.title = "KV-cache memory of multi-head vs grouped-query attention";
  t.show_inputs = false;
  // Report figures as shown, to two decimals (the JSON writes non-integers as float32).
  const auto two = [](double v) { return std::round(v * 100.0) / 100.0; };
  t.report = {{"formula", "bytes = batch * context_length * (emb_dim / heads) * layers * 2 * bytes_per_elem * kv_heads"},
              {"bytes_per_elem", bytes_per_elem},
              {"head_dim", head_dim},
              {"mha", {{"kv_heads", cfg.heads}, {"bytes", mha}, {"gb", two(static_cast<double>(mha) / 1e9)}}},
              {"gqa", {{"kv_heads", cfg.kv_groups}, {"bytes", gqa}, {"gb", two(static_cast<double>(gqa) / 1e9)}}},
              {"ratio", two(ratio)},
              {"savings_percent", two(savings)}};

  char row[160];
  t.notes.push_back("model: emb_dim " + with_commas(cfg.emb_dim) + ", " + std::to_string(cfg.heads) +
                    " heads (head_dim " + std::to_string(head_dim) + "), " + std::to_string(cfg.layers) +
                    " layers, context " + with_commas(cfg.context_length) + " tokens, batch " +
                    std::to_string(cfg.batch) + ", " + to_string(cfg.dtype) + " (" + std::to_string(bytes_per_elem) + " bytes)");
  t.notes.push_back("");
  t.notes.push_back("bytes = batch x context x (emb_dim / heads) x layers x 2 (keys and values) x bytes_per_elem x kv_heads");
  t.notes.push_back("");
  std::snprintf(row, sizeof row, "        %10s  %26s  %10s", "kv_heads", "bytes", "GB");
  t.notes.push_back(row);
  std::snprintf(row, sizeof row, "  MHA   %10zu  %26s  %10s", cfg.heads, with_commas(mha).c_str(),
                fixed(static_cast<double>(mha) / 1e9, 2).c_str());
  t.notes.push_back(row);
  std::snprintf(row, sizeof row, "  GQA   %10zu  %26s  %10s", cfg.kv_groups, with_commas(gqa).c_str(),
                fixed(static_cast<double>(gqa) / 1e9, 2).c_str());
  t.notes.push_back(row);
  t.notes.push_back("");
  t.notes.push_back("ratio " + fixed(ratio, 2) + "x: GQA saves " + fixed(savings, 2) + "% of the KV cache.");
  t.notes.push_back("(--kv-groups is the number of key/value heads, as in GroupedQueryAttention; the book's "
                    "memory_estimator_gqa.py names the group size, heads per key/value head, instead.)");
  t.resolve();
  return t;
}

Lesson gqa_lesson() {
  LessonConfig book;  // GroupedQueryAttention(d_in, d_out=4, num_heads=4, num_kv_groups=2)
  book.d_out = 4;
  book.heads = 4;
  book.kv_groups = 2;
  LessonConfig llama;  // the KV-cache explorer: a Llama-like 4096-dim, 32-head model with 8 key/value heads
  llama.heads = 32;
  llama.kv_groups = 8;
  llama.batch = 1;
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
  // --heads, --kv-groups and --batch keep their meaning here, with the large model's defaults.
  LessonMode kv_cache{{{Opt::KvCache,
                        "Instead of the lesson: the KV-cache memory of MHA vs GQA for a model (defaults: a Llama-like "
                        "4096-dim, 32-head, 32-layer model with 8 key/value heads, 32,768 tokens, batch 1, bf16)"},
                       {Opt::EmbDim, ""},
                       {Opt::Heads, ""},
                       {Opt::KvGroups, ""},
                       {Opt::Layers, ""},
                       {Opt::ContextLength, ""},
                       {Opt::Batch, ""},
                       {Opt::DType, ""}},
                      llama,
                      run_kv_cache,
                      /*uses_inputs=*/false,
                      Opt::KvCache};
  return {gqa_info(), {lesson, kv_cache}};
}

}  // namespace attn
