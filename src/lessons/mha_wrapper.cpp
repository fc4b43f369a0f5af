// attn mha-wrapper — 3.6.1 Stacking multiple single-head attention layers. Several CausalAttention
// heads, each with its own weights, run side by side; their outputs are concatenated.
#include <CLI/CLI.hpp>

#include "core/attention.hpp"
#include "lessons/lessons.hpp"

namespace attn {

const LessonInfo kMhaWrapperLesson{"mha-wrapper", "3.6.1", "Stacking multiple single-head attention layers",
                                   "Multi-head attention as a list of CausalAttention heads, outputs concatenated"};

ModuleOptions mha_wrapper_defaults() { return ModuleOptions{}; }

Trace run_mha_wrapper(const Inputs& in, const ModuleOptions& opt) {
  check_elements("the (b, num_tokens, num_tokens) attention weights of every head",
                 {opt.heads, opt.batch, in.num_tokens(), in.num_tokens()});
  check_elements("the heads' weights", {opt.heads, 3, in.d_in(), opt.d_out});
  check_elements("the (b, num_tokens, heads * d_out) context vectors", {opt.batch, in.num_tokens(), opt.heads, opt.d_out});
  const std::uint64_t seed = opt.seed.value_or(123);
  Trace t(kMhaWrapperLesson, in);
  record_module_config(t, opt, true, false, true, true);
  t.config["manual_seeds"] = {seed};
  const std::string ctor = "MultiHeadAttentionWrapper(d_in, d_out, context_length, " + py_float(opt.dropout) +
                           ", num_heads=" + std::to_string(opt.heads) + (opt.qkv_bias ? ", qkv_bias=True" : "") + ")";

  const Tensor3 batch = add_batch_step(t, in.embeddings, opt.batch);  // (b, num_tokens, d_in)

  TorchGenerator gen(seed);
  const MultiHeadAttentionWrapper mha(in.d_in(), opt.d_out, opt.dropout, opt.heads, opt.qkv_bias, gen);
  t.modules.push_back({"mha", ctor, mha.num_parameters()});
  t.notes.push_back("each head is a CausalAttention with its own W_query, W_key, W_value (d_out = " +
                    std::to_string(opt.d_out) + " per head), drawn head by head");
  const auto passes = mha.attend(batch, gen, opt.dropout_rng);
  for (std::size_t h = 0; h < passes.size(); ++h) {
    const std::string hs = std::to_string(h);
    t.add("head_" + hs + "_attn_weights", "Head " + hs + ": causal attention weights",
          "Head " + hs + " has its own weights, so it attends differently from the other heads.",
          "self.heads[" + hs + "]  # CausalAttention: softmax(masked scores / sqrt(d_k)), then dropout",
          passes[h].attn_weights).show_heatmap(true);
    t.add("head_" + hs + "_context_vec", "Head " + hs + ": context vectors",
          "What head " + hs + " contributes: (batch, num_tokens, d_out).", "self.heads[" + hs + "](x)",
          passes[h].context_vec);
  }
  t.add("context_vecs", "Concatenated context vectors",
        "The heads' outputs side by side along the last dimension: (batch, num_tokens, num_heads * d_out) = (" +
            std::to_string(opt.batch) + ", " + std::to_string(in.num_tokens()) + ", " +
            std::to_string(opt.heads * opt.d_out) + ").",
        "torch.manual_seed(" + std::to_string(seed) + ")\nmha = " + ctor +
            "\ncontext_vecs = mha(batch)  # torch.cat([head(x) for head in self.heads], dim=-1)",
        MultiHeadAttentionWrapper::concat(passes));
  return t;
}

void register_mha_wrapper(LessonRegistry& registry) {
  auto opt = std::make_shared<ModuleOptions>(mha_wrapper_defaults());
  CLI::App* cmd = registry.add(kMhaWrapperLesson, [opt](const Inputs& in) { return run_mha_wrapper(in, *opt); });
  add_heads_option(cmd, opt->heads);
  add_d_out_option(cmd, opt->d_out, "Output dimension of each head (--d-out 1 is exercise 3.2)");
  add_dropout_options(cmd, opt->dropout, opt->dropout_rng, "Dropout probability inside each head");
  add_batch_option(cmd, opt->batch);
  add_seed_option(cmd, opt->seed, "123");
  add_qkv_bias_option(cmd, opt->qkv_bias);
}

}  // namespace attn
