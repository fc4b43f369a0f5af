// The implementations attn bench times, each a run function on the bench's modules; their list, names and
// help are ATTN_BENCH_IMPLS (cli/bench_options.hpp), expanded here with every field.
#include "bench/impls.hpp"

#include "kernels/fast.hpp"
#include "kernels/kernels.hpp"

namespace attn {

namespace {

// Copies rows [first, first + count) of a layer's weight.
Matrix weight_rows(const Linear& layer, std::size_t first, std::size_t count) {
  Matrix w = xt::view(layer.weight, xt::range(first, first + count), xt::all());
  return w;
}

// The runs. No implementation draws from its generator (dropout 0); a fresh one costs microseconds.
Tensor3 run_wrapper(const BenchModules& m, unsigned) {
  TorchGenerator gen(0);
  Tensor3 heads = m.wrapper.forward(m.x, gen, DropoutRng::Default);  // (B, T, C)
  return m.mha.out_proj.forward(heads);
}
Tensor3 run_mha(const BenchModules& m, unsigned threads) {
  TorchGenerator gen(0);
  return m.mha.forward(m.x, gen, DropoutRng::Default, threads);
}
// The fast rows run with OpenMP's threads bound one to a CPU, and unbound after, so that the chapter's rows
// (OpenBLAS's threads and our own) run as they always did (pin_fast_threads, kernels/fast.hpp, says why).
Tensor3 run_fused(const BenchModules& m, unsigned threads) {
  const PinnedFastThreads pinned(threads);
  return mha_forward_fused(m.mha.weights(), m.x, threads);
}
Tensor3 run_gqa(const BenchModules& m, unsigned threads) {
  const PinnedFastThreads pinned(threads);
  return gqa_forward_fused(m.gqa.weights(), m.x, threads);
}

}  // namespace

double mha_gflop(const BenchOptions& o) {
  const double bt = static_cast<double>(o.batch * o.tokens), C = static_cast<double>(o.dim);
  const double attention = causal_attention_flops({o.batch, o.tokens, o.heads, o.heads, o.dim / o.heads});
  return (2.0 * bt * C * 3.0 * C + 2.0 * bt * C * C + attention) / 1e9;
}

double gqa_gflop(const BenchOptions& o) {
  const double bt = static_cast<double>(o.batch * o.tokens), C = static_cast<double>(o.dim);
  const double kv = static_cast<double>(o.kv_groups * (o.dim / o.heads));  // key/value width
  const double attention = causal_attention_flops({o.batch, o.tokens, o.heads, o.heads, o.dim / o.heads});
  return (2.0 * bt * C * (C + 2.0 * kv) + 2.0 * bt * C * C + attention) / 1e9;
}

const std::vector<BenchImpl>& bench_impl_table() {
#define ATTN_BENCH_IMPL_ENTRY(name, run, gflop, floats, max_nmse, help) BenchImpl{#name, help, gflop, run, max_nmse},
  static const std::vector<BenchImpl> table{ATTN_BENCH_IMPLS(ATTN_BENCH_IMPL_ENTRY)};
#undef ATTN_BENCH_IMPL_ENTRY
  return table;
}

BenchModules make_bench_modules(const BenchOptions& o) {
  const std::size_t B = o.batch, T = o.tokens, C = o.dim, H = o.heads, KV = o.kv_groups, hd = C / H;
  // Weights: a GroupedQueryAttention drawn after torch.manual_seed(123); the MultiHeadAttention gets its
  // query and output weights and, for every head, the key/value weights of that head's group, so all
  // implementations compute the same function and can be compared number for number.
  TorchGenerator gen(123);
  BenchModules m{GroupedQueryAttention(C, C, 0.0, H, KV, false, gen), MultiHeadAttention(C, C, 0.0, H, false, gen),
                 MultiHeadAttentionWrapper(C, hd, 0.0, H, false, gen), Tensor3()};
  m.mha.W_query = m.gqa.W_query;
  m.mha.out_proj.weight = m.gqa.out_proj.weight;
  m.mha.out_proj.bias.fill(0.0f);
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = h / (H / KV);
    xt::view(m.mha.W_key.weight, xt::range(h * hd, (h + 1) * hd), xt::all()) = weight_rows(m.gqa.W_key, g * hd, hd);
    xt::view(m.mha.W_value.weight, xt::range(h * hd, (h + 1) * hd), xt::all()) =
        weight_rows(m.gqa.W_value, g * hd, hd);
  }
  // The wrapper's heads: head h owns rows h*hd.. of each projection, concatenated, then the same out_proj.
  for (std::size_t h = 0; h < H; ++h) {
    m.wrapper.heads[h].W_query.weight = weight_rows(m.mha.W_query, h * hd, hd);
    m.wrapper.heads[h].W_key.weight = weight_rows(m.mha.W_key, h * hd, hd);
    m.wrapper.heads[h].W_value.weight = weight_rows(m.mha.W_value, h * hd, hd);
  }
  m.x = xt::empty<float>({B, T, C});  // (B, T, C): torch.rand after manual_seed(0)
  gen.manual_seed(0);
  for (auto& v : m.x) v = gen.uniform(0.0f, 1.0f);
  return m;
}

}  // namespace attn
