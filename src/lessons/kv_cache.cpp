// attn kv-cache — the KV cache (rasbt/LLMs-from-scratch ch04/03_kv-cache). A language model generates
// one token at a time, and each new token's query needs the keys and values of every token before it.
// The chapter's MultiHeadAttention would recompute them all for every new token; with a cache, each
// token's keys and values are computed once, appended to cache_k and cache_v, and read by every later
// token. The lesson decodes the input as such a model would (the first --prompt tokens in one call, then
// one token per call), shows the cache growing, checks the result against the full causal forward of
// `attn mha` (or `attn gqa` with --kv-groups), and counts what the cache saves in work and costs in memory.
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include <xtensor/xview.hpp>

#include "modules/attention.hpp"
#include "core/strings.hpp"
#include "lessons/lessons.hpp"
#include "lessons/multi_head.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo kv_cache_info() { return LessonText::info("kv-cache", "ch04/03_kv-cache"); }

namespace {

// The module a run decodes with: MultiHeadAttention as `attn mha` builds it, or, with --kv-groups,
// GroupedQueryAttention as `attn gqa` does, kept by the trace. Only what the cached forward reads.
struct Module {
  std::string name;  // "mha" or "gqa": the book's variable, and the prefix of its parameters' step ids
  std::string ctor;  // the constructor call as the book writes it
  std::size_t num_heads, kv_heads, head_dim, num_params;
  Node<Linear> W_query, W_key, W_value, out_proj;
};

// The sizes of a run.
struct Dims {
  std::size_t b, n, h, kv, hd, d_in, d_out, prompt;
};

// W(x) split into heads: (b, num_tokens_Q, d_in) -> (b, num_tokens_Q, heads, head_dim).
Tensor4 project_heads(const Linear& W, const Tensor3& x, std::size_t heads, std::size_t head_dim) {
  return view_heads(W.forward(x), heads, head_dim);
}

// One call of the cached forward, forward(x, use_cache=True) on the tokens at positions first..first+count-1,
// every intermediate a lazy node of the trace (handles: copyable, valid until the trace resolves).
struct CachedCall {
  std::size_t first, count;      // the call's new tokens; num_tokens_K = first + count
  Node<Tensor3> x;               // (b, num_tokens_Q, d_in): batch[:, first:first + count]
  Node<Tensor4> queries;         // (b, num_tokens_Q, num_heads, head_dim)
  Node<Tensor4> keys_new;        // (b, num_tokens_Q, kv_heads, head_dim)
  Node<Tensor4> values_new;      // (b, num_tokens_Q, kv_heads, head_dim)
  Node<Tensor4> cache_k;         // (b, num_tokens_K, kv_heads, head_dim)
  Node<Tensor4> cache_v;         // (b, num_tokens_K, kv_heads, head_dim)
  Node<AnyTensor> attn_scores;   // (b, num_heads, num_tokens_Q, num_tokens_K), unmasked
  Node<Matrix> mask;             // (num_tokens_Q, num_tokens_K): 1 where a key is hidden
  Node<AnyTensor> attn_weights;  // (b, num_heads, num_tokens_Q, num_tokens_K)
  Node<Tensor3> context_vec;     // (b, num_tokens_Q, d_out), after out_proj
};

// The call after `previous` (nullptr for the first, which starts the cache); `mask` is the
// (num_tokens_Q, num_tokens_K) slice of the causal mask it applies.
CachedCall cached_call(Trace& t, const Module& m, Node<Tensor3> batch, std::size_t first, std::size_t count,
                       const CachedCall* previous, Node<Matrix> mask) {
  CachedCall c{first, count, {}, {}, {}, {}, {}, {}, {}, mask, {}, {}};
  c.x = t.lazy<Tensor3>([](const Tensor3& batch, std::size_t first, std::size_t count) {
    return Tensor3(xt::view(batch, xt::all(), xt::range(first, first + count), xt::all()));
  }, batch, first, count);
  c.queries = t.lazy<Tensor4>(project_heads, m.W_query, c.x, m.num_heads, m.head_dim);
  c.keys_new = t.lazy<Tensor4>(project_heads, m.W_key, c.x, m.kv_heads, m.head_dim);
  c.values_new = t.lazy<Tensor4>(project_heads, m.W_value, c.x, m.kv_heads, m.head_dim);
  const auto first_cache = [](const Tensor4& fresh) { return fresh; };  // the first call's cache is its keys
  c.cache_k = previous ? t.lazy<Tensor4>(cat_tokens, previous->cache_k, c.keys_new)
                       : t.lazy<Tensor4>(first_cache, c.keys_new);
  c.cache_v = previous ? t.lazy<Tensor4>(cat_tokens, previous->cache_v, c.values_new)
                       : t.lazy<Tensor4>(first_cache, c.values_new);
  c.attn_scores = t.lazy<AnyTensor>([](const Tensor4& queries, const Tensor4& cache_k, std::size_t num_heads) {
    // keys, queries, values = keys.transpose(1, 2), ...; GQA: keys.repeat_interleave(group_size, dim=1)
    return head_scores(heads_first(queries), repeat_kv_heads(heads_first(cache_k), num_heads));
  }, c.queries, c.cache_k, m.num_heads);
  c.attn_weights = t.lazy<AnyTensor>([](const AnyTensor& attn_scores, const Matrix& mask, std::size_t head_dim) {
    return head_weights(masked_where(attn_scores, mask), head_dim);  // (b, h, Q, K)
  }, c.attn_scores, c.mask, m.head_dim);
  c.context_vec = t.lazy<Tensor3>([](const Tensor4& cache_v, const AnyTensor& attn_weights, const Linear& out_proj,
                                     std::size_t num_heads) {
    const Tensor4 values = repeat_kv_heads(heads_first(cache_v), num_heads);   // (b, h, K, hd)
    return out_proj.forward(combine_heads(head_context(attn_weights, values)));  // (b, Q, d_out)
  }, c.cache_v, c.attn_weights, m.out_proj, m.num_heads);
  return c;
}

// Multiply-adds of one forward call on one sequence: num_tokens_Q new tokens against num_tokens_K keys
// (the projections, the scores and weights @ values of every head, out_proj). What the "macs" step's code
// writes as macs_of(Q, K).
std::size_t macs_of(std::size_t q, std::size_t k, std::size_t d_in, std::size_t d_out, std::size_t kv_dim,
                    std::size_t heads, std::size_t head_dim) {
  return q * d_in * (d_out + 2 * kv_dim) + 2 * heads * q * k * head_dim + q * d_out * d_out;
}

// "tokens 0 to 2" for positions first..first+count-1 (count > 1).
std::string tokens_from_to(const LessonText& text, std::size_t first, std::size_t count) {
  return text.with({{"first", std::to_string(first)}, {"last", std::to_string(first + count - 1)}}).phrase("tokens_from_to");
}

// v with `decimals` digits after the point: "3.8", "17.18".
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// The module, built as `attn mha` (or `attn gqa`) builds it: same seed, same parameters, as steps.
Module add_module(const LessonText& text, const Inputs& in, const LessonConfig& cfg, const Dims& d,
                  TorchGenerator& gen) {
  Trace& t = text.trace();
  const bool grouped = cfg.kv_groups != 0;
  if (grouped) {
    using GQA = GroupedQueryAttention;
    const Node<GQA> gqa = t.keep(GQA(d.d_in, d.d_out, 0.0, d.h, d.kv, cfg.qkv_bias, gen));
    add_linear_steps(text, "gqa.W_key", gqa->W_key, text.phrase("role_gqa_key"));
    add_linear_steps(text, "gqa.W_value", gqa->W_value, text.phrase("role_gqa_value"));
    add_linear_steps(text, "gqa.W_query", gqa->W_query, text.phrase("role_gqa_query"));
    add_linear_steps(text, "gqa.out_proj", gqa->out_proj, text.phrase("role_gqa_out_proj"));
    return {"gqa",
            "GroupedQueryAttention(d_in, d_out, 0.0, num_heads=" + std::to_string(d.h) + ", num_kv_groups=" +
                std::to_string(d.kv) + (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")",
            d.h, d.kv, d.hd, gqa->num_parameters(), gqa.part(&GQA::W_query), gqa.part(&GQA::W_key),
            gqa.part(&GQA::W_value), gqa.part(&GQA::out_proj)};
  }
  using MHA = MultiHeadAttention;
  MHA built(d.d_in, d.d_out, 0.0, d.h, cfg.qkv_bias, gen);
  if (in.model) {  // the real layer (drawn first all the same, as attn mha --model does)
    use_real_layer(in, built.W_query, built.W_key, built.W_value, built.out_proj);
    t.notes.push_back(model_note(in, cfg, ModelUse::Layer, t.words));
  }
  const Node<MHA> mha = t.keep(std::move(built));
  add_linear_steps(text, "mha.W_query", mha->W_query, text.phrase("role_mha_query"));
  add_linear_steps(text, "mha.W_key", mha->W_key, text.phrase("role_mha_key"));
  add_linear_steps(text, "mha.W_value", mha->W_value, text.phrase("role_mha_value"));
  add_linear_steps(text, "mha.out_proj", mha->out_proj, text.phrase("role_mha_out_proj"));
  return {"mha",
          "MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=" + std::to_string(d.h) +
              (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")",
          d.h, d.h, d.hd, mha->num_parameters(), mha.part(&MHA::W_query), mha.part(&MHA::W_key),
          mha.part(&MHA::W_value), mha.part(&MHA::out_proj)};
}

// The decode: the prompt in one call, then one token per call (`spans`: each call's first token and count).
// Call c's steps are named after the position of its first new token: queries_0 (the prompt), queries_1, ...
// with --prompt 1.
std::vector<CachedCall> add_decode_steps(const LessonText& text, const Inputs& in, const Module& m,
                                         Node<Tensor3> batch, const Dims& d,
                                         const std::vector<std::pair<std::size_t, std::size_t>>& spans) {
  Trace& t = text.trace();
  const std::size_t b = d.b, h = d.h, kv = d.kv, hd = d.hd;
  const std::string mha_or_gqa = m.name;
  std::vector<CachedCall> calls;
  for (const auto& [first, count] : spans) {
    const Node<Matrix> mask = t.lazy<Matrix>(causal_mask_rows, first, count, first + count);
    calls.push_back(cached_call(t, m, batch, first, count, calls.empty() ? nullptr : &calls.back(), mask));
    const CachedCall& c = calls.back();
    const std::size_t q = count, k = first + count;
    const std::string one_or_prompt = q == 1 ? "token" : "prompt";
    LessonText call = text.with({{"at", std::to_string(first)},
                                 {"first", std::to_string(first)},
                                 {"end", std::to_string(k)},
                                 {"last_row", std::to_string(q - 1)},
                                 {"label", token_label(in, first)},
                                 {"span", tokens_from_to(text, first, q)},
                                 {"shape_q", shape_tuple({b, q, h, hd})},
                                 {"shape_kv", shape_tuple({b, q, kv, hd})},
                                 {"shape_scores", shape_tuple({b, h, q, k})},
                                 {"shape_out", shape_tuple({b, q, d.d_out})}});
    call.set("who", call.phrase({"who", one_or_prompt}));
    call.add({"queries_{at}", one_or_prompt}, {b, q, h, hd}, c.queries);
    call.add({"keys_new_{at}", mha_or_gqa}, {b, q, kv, hd}, c.keys_new);
    call.add("values_new_{at}", {b, q, kv, hd}, c.values_new);
    const std::string prompt_or_token = calls.size() == 1 ? "prompt" : "token";  // the first call starts the cache
    call.add({"cache_k_{at}", prompt_or_token}, {b, k, kv, hd}, c.cache_k);
    call.add({"cache_v_{at}", prompt_or_token}, {b, k, kv, hd}, c.cache_v);
    call.add({"attn_scores_{at}", one_or_prompt}, {b, h, q, k}, c.attn_scores);
    if (q > 1) call.add("mask_{at}", {q, k}, c.mask);
    call.add({"attn_weights_{at}", one_or_prompt}, {b, h, q, k}, c.attn_weights).show_heatmap_from(first, q > 1);
    call.add({"context_vec_{at}", one_or_prompt}, {b, q, d.d_out}, c.context_vec);
  }
  return calls;
}

// The pitfall: the tokens after the prompt in one call, masked with the mask's first rows.
void add_pitfall_steps(LessonText& text, const Module& m, Node<Tensor3> batch, const Dims& d,
                       const CachedCall& prompt_call) {
  Trace& t = text.trace();
  const std::size_t b = d.b, h = d.h, n = d.n, prompt = d.prompt, chunk = n - prompt;
  const Node<Matrix> first_rows = t.lazy<Matrix>(causal_mask_rows, std::size_t{0}, chunk, n);
  const CachedCall wrong = cached_call(t, m, batch, prompt, chunk, &prompt_call, first_rows);
  text.set("chunk", chunk).set("last_chunk_row", chunk - 1).set("prompt_plus_1", prompt + 1);
  text.add({"mask_unshifted", chunk == 1 ? "one" : "chunk"}, {chunk, n}, wrong.mask);
  text.add("attn_weights_unshifted", {b, h, chunk, n}, wrong.attn_weights)
      .show_heatmap_from(prompt, false);
  text.add("mask_ptr", {chunk, n}, causal_mask_rows, prompt, chunk, n);
}

// The decoded rows put together: (b, num_tokens, d_out).
Tensor3 assemble(const std::vector<CachedCall>& calls, std::size_t b, std::size_t n, std::size_t d_out) {
  Tensor3 out = xt::empty<float>({b, n, d_out});  // (b, num_tokens, d_out)
  for (const auto& c : calls) xt::view(out, xt::all(), xt::range(c.first, c.first + c.count)) = c.context_vec();
  return out;
}

// 1. Equivalence with the full causal forward.
void add_equivalence_steps(const LessonText& text, const Module& m, Node<Tensor3> batch, const Dims& d,
                           const std::vector<CachedCall>& calls, State<TorchGenerator> gen) {
  Trace& t = text.trace();
  const std::size_t b = d.b, h = d.h, n = d.n, d_out = d.d_out;
  const auto cached = t.lazy<Tensor3>(assemble, calls, b, n, d_out);  // (b, num_tokens, d_out)
  const MultiHeadSteps p(t, batch, m.W_query, m.W_key, m.W_value, m.out_proj, h, d.kv, 0.0, gen,
                         DropoutRng::Default);
  const auto full = t.lazy<Tensor3>([](const Tensor3& context_vecs) { return context_vecs; },
                                    p.context_vecs);  // (b, num_tokens, d_out)
  // The full forward's intermediates, held until the trace resolves: scores, masked, weights (and their
  // dropout copy) per head, and about ten (b, num_tokens, d_out) projections, head views and outputs. The
  // calls' inputs x, batch[:, first:first + count], stay in their nodes: one batch in all.
  t.needs_temporarily(saturating_sum(saturating_product({4, b, h, n, n}), saturating_product({10, b, n, d_out})));
  t.holds(saturating_product({b, n, d.d_in}));

  text.add({"context_vecs_cached", d.prompt == 1 ? "one" : "prompt"}, {b, n, d_out}, cached);
  text.add({"context_vecs", m.name}, {b, n, d_out}, full);
  text.add("max_abs_diff", {}, [](const Tensor3& cached, const Tensor3& full) {
    const Tensor3 difference = xt::abs(cached - full);  // (b, num_tokens, d_out)
    return Scalar(max_of(AnyTensor(difference)));      // NaN if a difference is NaN, as .max() gives
  }, cached, full);
}

// 2. Cost: multiply-adds per call, from the shapes alone.
void add_cost_steps(LessonText& text, const Dims& d, const std::vector<std::pair<std::size_t, std::size_t>>& spans) {
  const auto macs = [&](std::size_t q, std::size_t k) { return macs_of(q, k, d.d_in, d.d_out, d.kv * d.hd, d.h, d.hd); };
  Matrix cost = xt::empty<float>({spans.size(), std::size_t{3}});  // (calls, 3)
  std::size_t total_full = 0, total_cached = 0;
  for (std::size_t c = 0; c < spans.size(); ++c) {
    const std::size_t k = spans[c].first + spans[c].second;
    cost(c, 0) = static_cast<float>(k);
    cost(c, 1) = static_cast<float>(macs(k, k));
    cost(c, 2) = static_cast<float>(macs(spans[c].second, k));
    total_full += macs(k, k);
    total_cached += macs(spans[c].second, k);
  }
  text.set("total_full", text.number(total_full)).set("total_cached", text.number(total_cached));
  const auto ratio_text = [](std::size_t a, std::size_t c) {
    return fixed(static_cast<double>(a) / static_cast<double>(c), 1);
  };
  // GPT-2 small's attention (d_in = d_out = 768, 12 heads of 64) generating 1,024 tokens one by one.
  std::size_t gpt2_full = 0, gpt2_cached = 0;
  for (std::size_t k = 1; k <= 1024; ++k) {
    gpt2_full += macs_of(k, k, 768, 768, 768, 12, 64);
    gpt2_cached += macs_of(1, k, 768, 768, 768, 12, 64);
  }
  text.set("ratio", ratio_text(total_full, total_cached)).set("gpt2_ratio", ratio_text(gpt2_full, gpt2_cached));
  text.set("gpt2_full", text.number(gpt2_full)).set("gpt2_cached", text.number(gpt2_cached));
  text.add("macs", cost);
  text.add("macs_total", Vector{static_cast<float>(total_full), static_cast<float>(total_cached)});
}

// 3. Memory: what the cache holds, and what grouped-query attention saves.
void add_memory_steps(LessonText& text, const Dims& d, const std::string& mha_or_gqa) {
  const std::size_t b = d.b, n = d.n, h = d.h, kv = d.kv, hd = d.hd;
  const std::size_t cache_bytes = saturating_product({2, b, n, kv, hd, sizeof(float)});
  text.set("cache_bytes", text.number(cache_bytes)).set("shape_cache", shape_tuple({b, n, kv, hd}));
  text.set("kv", kv);
  text.add("cache_bytes", Scalar(static_cast<float>(cache_bytes)))
      .python_int = static_cast<std::int64_t>(cache_bytes);
  std::vector<std::size_t> divisors;
  for (std::size_t g = h; g >= 1; --g)
    if (h % g == 0) divisors.push_back(g);
  Matrix by_groups = xt::empty<float>({divisors.size(), std::size_t{2}});  // (choices, 2)
  for (std::size_t i = 0; i < divisors.size(); ++i) {
    by_groups(i, 0) = static_cast<float>(divisors[i]);
    by_groups(i, 1) = static_cast<float>(saturating_product({2, b, n, divisors[i], hd, sizeof(float)}));
  }
  text.add({"cache_bytes_by_kv_heads", mha_or_gqa}, by_groups);
}

}  // namespace

ResolvedTrace run_kv_cache(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(kv_cache_info(), in, sel);
  LessonText text(t, "kv-cache");
  const LessonConfig cfg = model_config(given, in, ModelUse::Layer, t);  // --model: the real layer's MHA
  const bool grouped = cfg.kv_groups != 0;  // --kv-groups given: GroupedQueryAttention
  LessonConfig shape = cfg;
  shape.kv_groups = grouped ? cfg.kv_groups : cfg.heads;
  check_heads(shape, grouped);
  const std::size_t n = in.num_tokens();
  text.set("tokens", count_of(n, "token")).set("prompt", cfg.prompt).set("last", n - 1).set("n", n);
  text.set("d_out", cfg.d_out).set("h", cfg.heads);
  text.set("kv_setup", grouped ? "\nnum_kv_groups = " + std::to_string(cfg.kv_groups) : "");
  std::string call_shapes = "[(" + std::to_string(cfg.prompt) + ", " + std::to_string(cfg.prompt) + ")";
  for (std::size_t k = cfg.prompt + 1; k <= n; ++k) call_shapes += ", (1, " + std::to_string(k) + ")";
  text.set("call_shapes", call_shapes + "]");
  if (n < 2) throw UsageError(text.phrase("too_short"));
  if (cfg.prompt >= n) throw UsageError(text.phrase("no_decode"));
  const Dims d{cfg.batch, n, cfg.heads, shape.kv_groups, cfg.d_out / cfg.heads, in.d_in(), cfg.d_out, cfg.prompt};
  check_elements("the (b, num_heads, num_tokens, num_tokens) attention weights of the full forward", {d.b, d.h, n, n});
  check_elements("the (b, num_tokens, d_out) projections", {d.b, n, d.d_out});
  const std::uint64_t seed = cfg.seed.value_or(123);

  // null without --kv-groups (MultiHeadAttention), as seed is null without --seed
  t.config["kv_groups"] = grouped ? nlohmann::ordered_json(d.kv) : nlohmann::ordered_json(nullptr);
  t.config["manual_seeds"] = {seed};

  const std::string mha_or_gqa = grouped ? "gqa" : "mha";
  const Node<Tensor3> batch = add_batch_step(text, d.b);  // (b, num_tokens, d_in)

  const State<TorchGenerator> gen = t.state(TorchGenerator(seed));
  const Module m = add_module(text, in, cfg, d, *gen);
  text.set("module", m.name).set("ctor", m.ctor).set("seed", seed);
  text.set("real_mha", grouped ? "" : real_layer_run(text, in, "mha"));
  text.run_first(m.name + (grouped ? ".W_key.weight" : ".W_query.weight"), text.phrase("notebook_module"));
  t.modules.push_back({m.name, m.ctor, m.num_params});
  add_num_params_step(text, m.name, m.num_params);
  text.set("kv_name", grouped ? "self.num_kv_groups" : "self.num_heads");
  text.set("full_lesson", grouped ? "attn gqa" : "attn mha");  // the lesson of the full forward
  text.set("kv_count", grouped ? "num_kv_groups" : "num_heads").set("module", m.name);
  text.set("repeat_keys", text.phrase({"repeat_keys", mha_or_gqa}));
  text.set("repeat_values", text.phrase({"repeat_values", mha_or_gqa}));
  text.set("prompt_tokens", d.prompt == 1 ? text.phrase("token_0") : tokens_from_to(text, 0, d.prompt));
  text.set("calls", n - d.prompt).set("h", d.h).set("hd", d.hd).set("kv", d.kv);
  text.set("group", d.h / d.kv);
  t.notes.push_back(text.phrase("decoding_note"));
  t.notes.push_back(text.phrase({"heads_note", mha_or_gqa}));

  std::vector<std::pair<std::size_t, std::size_t>> spans{{0, d.prompt}};  // (first, count) of each call
  for (std::size_t p = d.prompt; p < n; ++p) spans.push_back({p, 1});
  const std::vector<CachedCall> calls = add_decode_steps(text, in, m, batch, d, spans);
  add_pitfall_steps(text, m, batch, d, calls.front());
  add_equivalence_steps(text, m, batch, d, calls, gen);
  add_cost_steps(text, d, spans);
  add_memory_steps(text, d, mha_or_gqa);
  return t.resolve();
}

// The KV cache's memory for a model, MHA and GQA side by side: `attn kv-cache --estimate`, and
// `attn gqa --kv-cache`, where it began.
ResolvedTrace run_kv_cache_estimate(const LessonInfo& info, const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
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

  Trace t(info, in, sel);
  LessonText text(t, "kv-cache");
  t.info.title = text.phrase("estimate_title");
  t.show_inputs = false;
  // Report figures as shown, to two decimals (the JSON writes non-integers as float32).
  const auto two = [](double v) { return std::round(v * 100.0) / 100.0; };
  t.report = {{"formula", text.phrase("estimate_formula")},
              {"bytes_per_elem", bytes_per_elem},
              {"head_dim", head_dim},
              {"mha", {{"kv_heads", cfg.heads}, {"bytes", mha}, {"gb", two(static_cast<double>(mha) / 1e9)}}},
              {"gqa", {{"kv_heads", cfg.kv_groups}, {"bytes", gqa}, {"gb", two(static_cast<double>(gqa) / 1e9)}}},
              {"ratio", two(ratio)},
              {"savings_percent", two(savings)}};

  text.set("emb_dim", text.number(cfg.emb_dim)).set("heads", cfg.heads).set("head_dim", head_dim);
  text.set("layers", cfg.layers).set("context", text.number(cfg.context_length)).set("context_tokens", cfg.context_length).set("batch", cfg.batch);
  text.set("dtype", to_string(cfg.dtype)).set("bytes_per_elem", bytes_per_elem);
  text.set("ratio", fixed(ratio, 2)).set("savings", fixed(savings, 2));
  t.notes = {text.phrase("estimate_model"), "", text.phrase("estimate_bytes"), "", "",
             text.phrase("estimate_ratio"), text.phrase("estimate_groups")};
  // The table between the formula and the ratio, as data: the renderers lay it out (NoteTable).
  t.note_table = NoteTable{4,
                           {4, 10, 26, 10},
                           {"", "kv_heads", text.phrase("table_bytes"), text.phrase("table_gb")},
                           {{"MHA", std::to_string(cfg.heads), text.number(mha), fixed(static_cast<double>(mha) / 1e9, 2)},
                            {"GQA", std::to_string(cfg.kv_groups), text.number(gqa),
                             fixed(static_cast<double>(gqa) / 1e9, 2)}}};
  return t.resolve();
}

LessonMode kv_cache_estimate_mode(const LessonInfo& info, Opt selector, const std::string& selector_help) {
  LessonConfig llama;  // a Llama-like 4096-dim, 32-head, 32-layer model with 8 key/value heads
  llama.heads = 32;
  llama.kv_groups = 8;
  llama.batch = 1;
  // --heads, --kv-groups and --batch keep their meaning here, with the large model's defaults.
  return LessonMode{{{selector, selector_help},
                     {Opt::EmbDim, ""},
                     {Opt::Heads, ""},
                     {Opt::KvGroups, ""},
                     {Opt::Layers, option_help("kv-cache", "layers")},
                     {Opt::ContextLength, option_help("kv-cache", "context_length")},
                     {Opt::Batch, ""},
                     {Opt::DType, ""}},
                    llama,
                    [info](const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
                      return run_kv_cache_estimate(info, in, cfg, sel);
                    },
                    /*uses_inputs=*/false,
                    selector};
}

Lesson kv_cache_lesson() {
  LessonConfig book;  // attn mha's module: d_out 2, 2 heads, seed 123, a batch of 2; the prompt is token 0
  book.kv_groups = 0;  // none given: MultiHeadAttention
  LessonMode lesson{{{Opt::Prompt, ""},
                     {Opt::Heads, ""},
                     {Opt::KvGroups,
                      option_help("kv-cache", "kv_groups"),
                      "none"},
                     {Opt::DOut, option_help("kv-cache", "d_out")},
                     {Opt::Batch, ""},
                     {Opt::Seed, seed_help(option_help("kv-cache", "seeds"))},
                     {Opt::QkvBias, ""}},
                    book,
                    run_kv_cache};
  return {kv_cache_info(),
          {lesson, kv_cache_estimate_mode(kv_cache_info(), Opt::Estimate,
                                          option_help("kv-cache", "estimate"))},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "512x64", "--d-out", "64", "--heads", "8", "--batch", "2"},
                      {"--random", "256x64", "--d-out", "64", "--heads", "8", "--kv-groups", "2", "--prompt", "200"},
                      {"--random", "256x32", "--d-out", "32", "--heads", "4", "--json"}},
                     {"--d-out", "16", "--heads", "4"}}};
}

}  // namespace attn
