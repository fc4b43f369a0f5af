// attn gqa — grouped-query attention (rasbt/LLMs-from-scratch, ch04/04_gqa). Query heads share fewer
// key/value heads: fewer parameters and a smaller KV cache, nearly the same attention.
#include <cmath>
#include <cstdio>
#include <limits>

#include <CLI/CLI.hpp>

#include "core/attention.hpp"
#include "lessons/lessons.hpp"

namespace attn {

const LessonInfo kGqaLesson{"gqa", "ch04/04_gqa", "Grouped-query attention",
                            "GroupedQueryAttention: several query heads share each key/value head"};

ModuleOptions gqa_defaults() {
  ModuleOptions opt;
  opt.d_out = 4;
  opt.heads = 4;
  opt.kv_groups = 2;
  return opt;
}

Trace run_gqa(const Inputs& in, const ModuleOptions& opt) {
  check_heads(opt, true);
  check_elements("the (b, num_heads, num_tokens, num_tokens) attention weights",
                 {opt.batch, opt.heads, in.num_tokens(), in.num_tokens()});
  check_elements("the (b, num_tokens, d_out) projections", {opt.batch, in.num_tokens(), opt.d_out});
  const std::uint64_t seed = opt.seed.value_or(123);
  const std::size_t h = opt.heads, kv = opt.kv_groups, group_size = h / kv;
  Trace t(kGqaLesson, in);
  record_module_config(t, opt, true, true, true, true);
  t.config["manual_seeds"] = {seed};
  const std::string ctor = "GroupedQueryAttention(d_in, d_out, " + py_float(opt.dropout) + ", num_heads=" +
                           std::to_string(h) + ", num_kv_groups=" + std::to_string(kv) +
                           (opt.qkv_bias ? ", qkv_bias=True" : "") + ")";

  const Tensor3 batch = add_batch_step(t, in.embeddings, opt.batch);  // (b, num_tokens, d_in)

  TorchGenerator gen(seed);
  const GroupedQueryAttention gqa(in.d_in(), opt.d_out, opt.dropout, h, kv, opt.qkv_bias, gen);
  t.modules.push_back({"gqa", ctor, gqa.num_parameters()});
  std::string sharing;
  for (std::size_t g = 0; g < kv; ++g) {
    sharing += (g ? "; " : "") + std::string("group ") + std::to_string(g) + " <- query heads " +
               std::to_string(g * group_size) + (group_size > 1 ? ".." + std::to_string((g + 1) * group_size - 1) : "");
  }
  t.notes.push_back("num_heads = " + std::to_string(h) + ", num_kv_groups = " + std::to_string(kv) +
                    ", group_size = " + std::to_string(group_size) + ": " + sharing);
  const MultiHeadPass p = gqa.attend(batch, gen, opt.dropout_rng);

  t.add("queries", "Queries: one per query head",
        "W_query projects to d_out, split into num_heads heads: (b, num_heads, num_tokens, head_dim).",
        "queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)", p.queries);
  t.add("keys", "Keys: one per key/value group",
        "W_key projects to only num_kv_groups * head_dim: (b, num_kv_groups, num_tokens, head_dim). This is what "
        "a KV cache stores, and why GQA's cache is smaller.",
        "keys = self.W_key(x).view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)", p.keys);
  t.add("values", "Values: one per key/value group", "Likewise num_kv_groups heads.",
        "values = self.W_value(x).view(b, num_tokens, self.num_kv_groups, self.head_dim).transpose(1, 2)", p.values);
  t.add("keys_repeated", "Keys repeated for the query heads",
        "repeat_interleave copies each group group_size times in place ([K1, K1, K2, K2], not [K1, K2, K1, K2]) so "
        "every query head has a key head.",
        "keys = keys.repeat_interleave(self.group_size, dim=1)", p.keys_repeated);
  t.add("values_repeated", "Values repeated for the query heads", "The same for the values.",
        "values = values.repeat_interleave(self.group_size, dim=1)", p.values_repeated);
  Vector group_of_head = xt::empty<float>({h});  // (num_heads,)
  for (std::size_t i = 0; i < h; ++i) group_of_head(i) = static_cast<float>(i / group_size);
  t.add("kv_group_of_head", "Which key/value group each query head reads",
        "Entry i is the group query head i shares: " + sharing + ".",
        "torch.arange(self.num_heads) // self.group_size", group_of_head);
  t.add("attn_scores", "Attention scores of every query head", "(b, num_heads, num_tokens, num_tokens).",
        "attn_scores = queries @ keys.transpose(2, 3)", p.attn_scores);
  t.add("masked", "Scores with the future masked", "The causal mask, the same for every head.",
        "attn_scores = attn_scores.masked_fill(mask, -torch.inf)", p.masked).show_heatmap(true);
  t.add("attn_weights", "Attention weights of every query head",
        "Heads that share keys still differ, because their queries differ.",
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", p.attn_weights).show_heatmap(true);
  t.add("attn_weights_dropout", "After dropout", "Dropout on the weights (the same weights when p = 0).",
        "attn_weights = self.dropout(attn_weights)", p.attn_weights_dropout).show_heatmap(true);
  t.add("context_vec", "Heads combined", "Weights times values per head, heads concatenated per token.",
        "context_vec = (attn_weights @ values).transpose(1, 2)\n"
        "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)",
        p.context_combined);
  t.add("context_vecs", "Context vectors after out_proj", "The output projection (no bias in this class).",
        "torch.manual_seed(" + std::to_string(seed) + ")\ngqa = " + ctor +
            "\ncontext_vecs = gqa(batch)  # context_vec = self.out_proj(context_vec)",
        p.context_vecs);
  return t;
}

Trace run_kv_cache(const Inputs& in, const KvCacheOptions& opt) {
  if (opt.emb_dim % opt.heads != 0)
    throw UsageError("--emb-dim " + std::to_string(opt.emb_dim) + " is not divisible by --heads " +
                     std::to_string(opt.heads));
  if (opt.heads % opt.kv_groups != 0)
    throw UsageError("--heads " + std::to_string(opt.heads) + " is not divisible by --kv-groups " +
                     std::to_string(opt.kv_groups));
  const std::size_t bytes_per_elem = opt.dtype == "fp32" ? 4 : 2;
  const std::size_t head_dim = opt.emb_dim / opt.heads;
  // bytes = batch x context x head_dim x layers x 2 (keys and values) x bytes_per_elem x kv_heads
  const auto cache_bytes = [&](std::size_t kv_heads) {
    const std::size_t bytes =
        saturating_product({opt.batch, opt.context_length, head_dim, opt.layers, 2, bytes_per_elem, kv_heads});
    if (bytes == std::numeric_limits<std::size_t>::max()) throw UsageError("the KV cache of this model overflows 2^64 bytes");
    return bytes;
  };
  const std::size_t mha = cache_bytes(opt.heads), gqa = cache_bytes(opt.kv_groups);
  const double ratio = static_cast<double>(mha) / static_cast<double>(gqa);
  const double savings = 100.0 * (1.0 - static_cast<double>(gqa) / static_cast<double>(mha));
  const auto fixed = [](double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };

  Trace t(kGqaLesson, in);
  t.info.title = "KV-cache memory of multi-head vs grouped-query attention";
  t.show_inputs = false;
  t.config.erase("input");
  t.config["kv_cache"] = true;
  t.config["emb_dim"] = opt.emb_dim;
  t.config["heads"] = opt.heads;
  t.config["kv_groups"] = opt.kv_groups;
  t.config["layers"] = opt.layers;
  t.config["context_length"] = opt.context_length;
  t.config["batch"] = opt.batch;
  t.config["dtype"] = opt.dtype;
  // Report figures as shown, to two decimals (the JSON writes non-integers as float32).
  const auto two = [](double v) { return std::round(v * 100.0) / 100.0; };
  t.report = {{"formula", "bytes = batch * context_length * (emb_dim / heads) * layers * 2 * bytes_per_elem * kv_heads"},
              {"bytes_per_elem", bytes_per_elem},
              {"head_dim", head_dim},
              {"mha", {{"kv_heads", opt.heads}, {"bytes", mha}, {"gb", two(static_cast<double>(mha) / 1e9)}}},
              {"gqa", {{"kv_heads", opt.kv_groups}, {"bytes", gqa}, {"gb", two(static_cast<double>(gqa) / 1e9)}}},
              {"ratio", two(ratio)},
              {"savings_percent", two(savings)}};

  char row[160];
  t.notes.push_back("model: emb_dim " + with_commas(opt.emb_dim) + ", " + std::to_string(opt.heads) +
                    " heads (head_dim " + std::to_string(head_dim) + "), " + std::to_string(opt.layers) +
                    " layers, context " + with_commas(opt.context_length) + " tokens, batch " +
                    std::to_string(opt.batch) + ", " + opt.dtype + " (" + std::to_string(bytes_per_elem) + " bytes)");
  t.notes.push_back("");
  t.notes.push_back("bytes = batch x context x (emb_dim / heads) x layers x 2 (keys and values) x bytes_per_elem x kv_heads");
  t.notes.push_back("");
  std::snprintf(row, sizeof row, "        %10s  %26s  %10s", "kv_heads", "bytes", "GB");
  t.notes.push_back(row);
  std::snprintf(row, sizeof row, "  MHA   %10zu  %26s  %10s", opt.heads, with_commas(mha).c_str(),
                fixed(static_cast<double>(mha) / 1e9, 2).c_str());
  t.notes.push_back(row);
  std::snprintf(row, sizeof row, "  GQA   %10zu  %26s  %10s", opt.kv_groups, with_commas(gqa).c_str(),
                fixed(static_cast<double>(gqa) / 1e9, 2).c_str());
  t.notes.push_back(row);
  t.notes.push_back("");
  t.notes.push_back("ratio " + fixed(ratio, 2) + "x: GQA saves " + fixed(savings, 2) + "% of the KV cache.");
  t.notes.push_back("(--kv-groups is the number of key/value heads, as in GroupedQueryAttention; the book's "
                    "memory_estimator_gqa.py names the group size, heads per key/value head, instead.)");
  return t;
}

void register_gqa(LessonRegistry& registry) {
  auto opt = std::make_shared<ModuleOptions>(gqa_defaults());
  auto kv = std::make_shared<KvCacheOptions>();
  auto kv_cache = std::make_shared<bool>(false);
  CLI::App* cmd = registry.add(kGqaLesson, [opt, kv, kv_cache](const Inputs& in) {
    return *kv_cache ? run_kv_cache(in, *kv) : run_gqa(in, *opt);
  });
  add_heads_option(cmd, opt->heads);
  add_kv_groups_option(cmd, opt->kv_groups);
  add_d_out_option(cmd, opt->d_out, "Output dimension of the whole module, split over the query heads");
  add_dropout_options(cmd, opt->dropout, opt->dropout_rng, "Dropout probability on the attention weights");
  add_batch_option(cmd, opt->batch);
  add_seed_option(cmd, opt->seed, "123");
  add_qkv_bias_option(cmd, opt->qkv_bias);

  // The KV-cache explorer: --heads, --kv-groups and --batch keep their meaning, with a large model's defaults.
  cmd->add_flag("--kv-cache", *kv_cache,
                "Instead of the lesson: the KV-cache memory of MHA vs GQA for a model (defaults: a Llama-like "
                "4096-dim, 32-head, 32-layer model with 8 key/value heads, 32,768 tokens, batch 1, bf16)");
  cmd->add_option("--emb-dim", kv->emb_dim, "With --kv-cache: embedding size")
      ->capture_default_str()
      ->check(whole_number(1, std::size_t{1} << 20))
      ->type_name("N");
  cmd->add_option("--layers", kv->layers, "With --kv-cache: number of transformer layers")
      ->capture_default_str()
      ->check(whole_number(1, 4096))
      ->type_name("N");
  cmd->add_option("--context-length", kv->context_length, "With --kv-cache: tokens held in the cache")
      ->capture_default_str()
      ->check(whole_number(1, std::size_t{1} << 30))
      ->type_name("N");
  cmd->add_option("--dtype", kv->dtype, "With --kv-cache: element type of the cache, fp32, bf16 or fp16")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return v == "fp32" || v == "bf16" || v == "fp16" ? "" : "expected fp32, bf16 or fp16, got '" + v + "'";
          },
          ""))
      ->type_name("TYPE");
  // Given values of the shared options override the explorer's defaults.
  cmd->callback([cmd, opt, kv]() {
    if (cmd->count("--heads") > 0) kv->heads = opt->heads;
    if (cmd->count("--kv-groups") > 0) kv->kv_groups = opt->kv_groups;
    if (cmd->count("--batch") > 0) kv->batch = opt->batch;
  });
}

}  // namespace attn
