// attn gqa — grouped-query attention (rasbt/LLMs-from-scratch, ch04/04_gqa). Query heads share fewer
// key/value heads: fewer parameters and a smaller KV cache, nearly the same attention.
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
        "attn_scores = attn_scores.masked_fill(mask, -torch.inf)", p.masked);
  t.add("attn_weights", "Attention weights of every query head",
        "Heads that share keys still differ, because their queries differ.",
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", p.attn_weights);
  t.add("attn_weights_dropout", "After dropout", "Dropout on the weights (the same weights when p = 0).",
        "attn_weights = self.dropout(attn_weights)", p.attn_weights_dropout);
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

void register_gqa(LessonRegistry& registry) {
  auto opt = std::make_shared<ModuleOptions>(gqa_defaults());
  CLI::App* cmd = registry.add(kGqaLesson, [opt](const Inputs& in) { return run_gqa(in, *opt); });
  add_heads_option(cmd, opt->heads);
  add_kv_groups_option(cmd, opt->kv_groups);
  add_d_out_option(cmd, opt->d_out, "Output dimension of the whole module, split over the query heads");
  add_dropout_options(cmd, opt->dropout, opt->dropout_rng, "Dropout probability on the attention weights");
  add_batch_option(cmd, opt->batch);
  add_seed_option(cmd, opt->seed, "123");
  add_qkv_bias_option(cmd, opt->qkv_bias);
}

}  // namespace attn
