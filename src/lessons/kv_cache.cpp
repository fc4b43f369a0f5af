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
static LessonInfo kv_cache_info() {
  return {"kv-cache", "ch04/03_kv-cache", "The KV cache: decoding one token at a time",
          "Decoding token by token: keys and values cached once, the same rows as the full forward"};
}

namespace {

// The module a run decodes with: MultiHeadAttention as `attn mha` builds it, or, with --kv-groups,
// GroupedQueryAttention as `attn gqa` does. Only what the cached forward reads.
struct Module {
  std::string name;  // "mha" or "gqa": the book's variable, and the prefix of its parameters' step ids
  std::string ctor;  // the constructor call as the book writes it
  std::size_t num_heads, kv_heads, head_dim, num_params;
  const Linear *W_query, *W_key, *W_value, *out_proj;
};

// One call of the cached forward, forward(x, use_cache=True) on the tokens at positions first..first+count-1,
// every intermediate a Lazy value of the trace. `previous` is the call before it (nullptr for the first,
// which starts the cache); `mask` is the (num_tokens_Q, num_tokens_K) slice of the causal mask it applies.
struct CachedCall {
  CachedCall(Trace& t, const Module& m, const Lazy<Tensor3>& batch, std::size_t first_, std::size_t count_,
             const CachedCall* previous, std::function<Matrix()> mask_rows)
      : first(first_),
        count(count_),
        // Pointers, not references, are captured: the lambdas outlive this constructor's parameters.
        x(t.lazy<Tensor3>([batch = &batch, this] {
          return Tensor3(xt::view((*batch)(), xt::all(), xt::range(first, first + count), xt::all()));
        })),
        queries(t.lazy<Tensor4>([m = &m, this] { return view_heads(m->W_query->forward(x()), m->num_heads, m->head_dim); })),
        keys_new(t.lazy<Tensor4>([m = &m, this] { return view_heads(m->W_key->forward(x()), m->kv_heads, m->head_dim); })),
        values_new(t.lazy<Tensor4>([m = &m, this] { return view_heads(m->W_value->forward(x()), m->kv_heads, m->head_dim); })),
        cache_k(t.lazy<Tensor4>([previous, this] {
          return previous ? cat_tokens(previous->cache_k(), keys_new()) : keys_new();
        })),
        cache_v(t.lazy<Tensor4>([previous, this] {
          return previous ? cat_tokens(previous->cache_v(), values_new()) : values_new();
        })),
        attn_scores(t.lazy<AnyTensor>([m = &m, this] {
          // keys, queries, values = keys.transpose(1, 2), ...; GQA: keys.repeat_interleave(group_size, dim=1)
          return head_scores(heads_first(queries()), repeat_kv_heads(heads_first(cache_k()), m->num_heads));
        })),
        mask(t.lazy<Matrix>(std::move(mask_rows))),
        attn_weights(t.lazy<AnyTensor>([m = &m, this] {
          return head_weights(masked_where(attn_scores(), mask()), m->head_dim);  // (b, h, Q, K)
        })),
        context_vec(t.lazy<Tensor3>([m = &m, this] {
          const Tensor4 values = repeat_kv_heads(heads_first(cache_v()), m->num_heads);  // (b, h, K, hd)
          return m->out_proj->forward(combine_heads(head_context(attn_weights(), values)));  // (b, Q, d_out)
        })) {}
  CachedCall(const CachedCall&) = delete;

  const std::size_t first, count;  // the call's new tokens; num_tokens_K = first + count
  Lazy<Tensor3> x;                 // (b, num_tokens_Q, d_in): batch[:, first:first + count]
  Lazy<Tensor4> queries;           // (b, num_tokens_Q, num_heads, head_dim)
  Lazy<Tensor4> keys_new;          // (b, num_tokens_Q, kv_heads, head_dim)
  Lazy<Tensor4> values_new;        // (b, num_tokens_Q, kv_heads, head_dim)
  Lazy<Tensor4> cache_k;           // (b, num_tokens_K, kv_heads, head_dim)
  Lazy<Tensor4> cache_v;           // (b, num_tokens_K, kv_heads, head_dim)
  Lazy<AnyTensor> attn_scores;     // (b, num_heads, num_tokens_Q, num_tokens_K), unmasked
  Lazy<Matrix> mask;               // (num_tokens_Q, num_tokens_K): 1 where a key is hidden
  Lazy<AnyTensor> attn_weights;    // (b, num_heads, num_tokens_Q, num_tokens_K)
  Lazy<Tensor3> context_vec;       // (b, num_tokens_Q, d_out), after out_proj
};

// Multiply-adds of one forward call on one sequence: num_tokens_Q new tokens against num_tokens_K keys
// (the projections, the scores and weights @ values of every head, out_proj). What the "macs" step's code
// writes as macs_of(Q, K).
std::size_t macs_of(std::size_t q, std::size_t k, std::size_t d_in, std::size_t d_out, std::size_t kv_dim,
                    std::size_t heads, std::size_t head_dim) {
  return q * d_in * (d_out + 2 * kv_dim) + 2 * heads * q * k * head_dim + q * d_out * d_out;
}

// "tokens 0 to 2" for positions first..first+count-1 (count > 1).
std::string tokens_from_to(std::size_t first, std::size_t count) {
  return "tokens " + std::to_string(first) + " to " + std::to_string(first + count - 1);
}

// v with `decimals` digits after the point: "3.8", "17.18".
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

Trace run_kv_cache(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(kv_cache_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::Layer, t);  // --model: the real layer's MHA
  const bool grouped = cfg.kv_groups != 0;  // --kv-groups given: GroupedQueryAttention
  LessonConfig shape = cfg;
  shape.kv_groups = grouped ? cfg.kv_groups : cfg.heads;
  check_heads(shape, grouped);
  const std::size_t n = in.num_tokens();
  if (n < 2)
    throw UsageError("attn kv-cache needs at least 2 tokens, one to cache and one to decode (the input has " +
                     count_of(n, "token") + ")");
  if (cfg.prompt >= n)
    throw UsageError("--prompt " + std::to_string(cfg.prompt) + " leaves no token to decode (the input has " +
                     count_of(n, "token") + "; use 1 to " + std::to_string(n - 1) + ")");
  const std::size_t b = cfg.batch, h = cfg.heads, kv = shape.kv_groups, hd = cfg.d_out / h, d_in = in.d_in();
  const std::size_t prompt = cfg.prompt, d_out = cfg.d_out;
  check_elements("the (b, num_heads, num_tokens, num_tokens) attention weights of the full forward", {b, h, n, n});
  check_elements("the (b, num_tokens, d_out) projections", {b, n, d_out});
  const std::uint64_t seed = cfg.seed.value_or(123);

  // null without --kv-groups (MultiHeadAttention), as seed is null without --seed
  t.config["kv_groups"] = grouped ? nlohmann::ordered_json(kv) : nlohmann::ordered_json(nullptr);
  t.config["manual_seeds"] = {seed};

  const BatchStep batch(t, in.embeddings, b);  // (b, num_tokens, d_in)

  // The module, built as `attn mha` (or `attn gqa`) builds it: same seed, same parameters.
  TorchGenerator gen(seed);
  std::unique_ptr<MultiHeadAttention> mha;
  std::unique_ptr<GroupedQueryAttention> gqa;
  Module m;
  if (grouped) {
    gqa = std::make_unique<GroupedQueryAttention>(d_in, d_out, 0.0, h, kv, cfg.qkv_bias, gen);
    m = {"gqa",
         "GroupedQueryAttention(d_in, d_out, 0.0, num_heads=" + std::to_string(h) + ", num_kv_groups=" +
             std::to_string(kv) + (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")",
         h, kv, hd, gqa->num_parameters(), &gqa->W_query, &gqa->W_key, &gqa->W_value, &gqa->out_proj};
    add_linear_steps(t, "gqa.W_key", gqa->W_key, "projects each token to the keys of the key/value heads only");
    add_linear_steps(t, "gqa.W_value", gqa->W_value, "projects each token to the values of the key/value heads");
    add_linear_steps(t, "gqa.W_query", gqa->W_query, "projects each token to the queries of all query heads");
    add_linear_steps(t, "gqa.out_proj", gqa->out_proj, "mixes the heads' concatenated outputs (no bias in this class)");
  } else {
    mha = std::make_unique<MultiHeadAttention>(d_in, d_out, 0.0, h, cfg.qkv_bias, gen);
    if (in.model) {  // the real layer (drawn first all the same, as attn mha --model does)
      const Gpt2Attention& real = in.model->attention;
      mha->W_query = real.W_query;
      mha->W_key = real.W_key;
      mha->W_value = real.W_value;
      mha->out_proj = real.out_proj;
      t.notes.push_back(model_note(in, cfg, ModelUse::Layer));
    }
    m = {"mha",
         "MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=" + std::to_string(h) +
             (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")",
         h, h, hd, mha->num_parameters(), &mha->W_query, &mha->W_key, &mha->W_value, &mha->out_proj};
    add_linear_steps(t, "mha.W_query", mha->W_query, "projects each token to the queries of all heads at once");
    add_linear_steps(t, "mha.W_key", mha->W_key, "projects each token to the keys of all heads");
    add_linear_steps(t, "mha.W_value", mha->W_value, "projects each token to the values of all heads");
    add_linear_steps(t, "mha.out_proj", mha->out_proj, "mixes the heads' concatenated outputs");
  }
  t.modules.push_back({m.name, m.ctor, m.num_params});
  add_num_params_step(t, m.name, m.num_params);
  const std::string kv_name = grouped ? "self.num_kv_groups" : "self.num_heads";
  const std::string full_lesson = grouped ? "attn gqa" : "attn mha";  // the lesson of the full forward
  t.notes.push_back("decoding: " + (prompt == 1 ? std::string("token 0") : tokens_from_to(0, prompt)) +
                    " in the first call (--prompt " + std::to_string(prompt) + "), then " +
                    count_of(n - prompt, "call") + " of one token each");
  t.notes.push_back("num_heads = " + std::to_string(h) + ", head_dim = " + std::to_string(hd) +
                    (grouped ? ", num_kv_groups = " + std::to_string(kv) + ": query heads " +
                                   "share each cached key/value head in groups of " + std::to_string(h / kv)
                             : ": every head caches its own keys and values"));

  // The decode: the prompt in one call, then one token per call. Call c's steps are named after the
  // position of its first new token: queries_0 (the prompt), queries_1, ... with --prompt 1.
  std::vector<std::unique_ptr<CachedCall>> calls;
  std::vector<std::pair<std::size_t, std::size_t>> spans{{0, prompt}};  // (first, count)
  for (std::size_t p = prompt; p < n; ++p) spans.push_back({p, 1});
  for (const auto& [first, count] : spans) {
    const CachedCall* previous = calls.empty() ? nullptr : calls.back().get();
    calls.push_back(std::make_unique<CachedCall>(t, m, batch.value, first, count, previous,
                                                 [first = first, count = count] {
                                                   return causal_mask_rows(first, count, first + count);
                                                 }));
    const CachedCall& c = *calls.back();
    const std::size_t q = count, k = first + count;
    const std::string at = std::to_string(first);
    const bool is_prompt = calls.size() == 1;
    const std::string who = q == 1 ? "token " + token_label(in, first) : "the prompt, " + tokens_from_to(first, q);
    const std::string x_line = "x = batch[:, " + std::to_string(first) + ":" + std::to_string(first + q) + "]  # " +
                               (q == 1 ? "the new token" : "the prompt") + ": (b, num_tokens, d_in)\n";
    t.add("queries_" + at, "Queries of " + who,
          (q == 1 ? std::string("W_query projects only the new token. ")
                  : std::string("The prompt is cached in one call, as generate_text_simple_cached does: ")) +
              "view splits d_out into heads: (b, num_tokens, num_heads, head_dim) = " + shape_tuple({b, q, h, hd}) +
              ". Queries are never cached: a query is needed only by the token it belongs to.",
          x_line + "queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim)", {b, q, h, hd},
          c.queries);
    t.add("keys_new_" + at, "Keys of " + who,
          "Computed once, now, and never again: every later token reads them from the cache. " +
              shape_tuple({b, q, kv, hd}) + (grouped ? ": num_kv_groups heads only." : "."),
          "keys_new = self.W_key(x).view(b, num_tokens, " + kv_name + ", self.head_dim)", {b, q, kv, hd},
          c.keys_new);
    t.add("values_new_" + at, "Values of " + who, "Likewise computed once.",
          "values_new = self.W_value(x).view(b, num_tokens, " + kv_name + ", self.head_dim)", {b, q, kv, hd},
          c.values_new);
    t.add("cache_k_" + at, "The key cache: " + count_of(k, "token"),
          is_prompt ? "The cache was empty (reset_cache() set it to None), so the prompt's keys become it: "
                      "(b, num_tokens, num_heads, head_dim), tokens on dim 1."
                    : "torch.cat appends the new keys on dim 1, the token dimension: the cache grows from " +
                          std::to_string(first) + " to " + std::to_string(k) +
                          " tokens, and nothing already in it is computed again.",
          is_prompt ? "self.cache_k, self.cache_v = keys_new, values_new  # the first call: the cache was None"
                    : "self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)",
          {b, k, kv, hd}, c.cache_k);
    t.add("cache_v_" + at, "The value cache: " + count_of(k, "token"), "The values grow the same way.",
          is_prompt ? "keys, values = self.cache_k, self.cache_v"
                    : "self.cache_v = torch.cat([self.cache_v, values_new], dim=1)\nkeys, values = self.cache_k, "
                      "self.cache_v",
          {b, k, kv, hd}, c.cache_v);
    const std::string transposes =
        "keys, queries, values = keys.transpose(1, 2), queries.transpose(1, 2), values.transpose(1, 2)\n" +
        std::string(grouped ? "keys = keys.repeat_interleave(self.group_size, dim=1)  # each query head reads its "
                              "group's cache\n"
                            : "");
    t.add("attn_scores_" + at, q == 1 ? "The new query against every cached key" : "The prompt's scores",
          q == 1 ? "One row per head, " + shape_tuple({b, h, 1, k}) +
                       ": the new token's query against the keys of all " + std::to_string(k) +
                       " tokens so far. No mask is needed: the cache holds only this token and the ones before it, "
                       "so there is no later key to hide (the code's mask row, ptr_current_pos = " +
                       std::to_string(first) + ", is all zeros over these keys)."
                 : "The prompt's tokens score each other, " + shape_tuple({b, h, q, k}) +
                       ", as in " + full_lesson + ": here a token could see the ones after it, so the causal mask "
                       "follows.",
          transposes + "attn_scores = queries @ keys.transpose(2, 3)", {b, h, q, k}, c.attn_scores);
    if (q > 1)
      t.add("mask_" + at, "The mask rows of this call",
            "ptr_current_pos is 0 for the first call, so the rows are the usual upper triangle (1 = masked): "
            "each prompt token is hidden the prompt tokens after it.",
            "mask_bool = self.mask.bool()[self.ptr_current_pos:self.ptr_current_pos + num_tokens_Q, :num_tokens_K]\n"
            "self.ptr_current_pos += num_tokens_Q\nattn_scores.masked_fill_(mask_bool, -torch.inf)  # (shown: "
            "the 0/1 of self.mask)",
            {q, k}, c.mask);
    t.add("attn_weights_" + at, q == 1 ? "Attention weights of the new token" : "Attention weights of the prompt",
          q == 1 ? "Softmax over the " + std::to_string(k) +
                       " cached keys, scaled by sqrt(head_dim): this is row " + std::to_string(first) +
                       " of " + full_lesson + "'s attn_weights, computed without the rows before it."
                 : "Softmax over each row, scaled by sqrt(head_dim): rows 0 to " + std::to_string(q - 1) + " of " +
                       full_lesson + "'s attn_weights.",
          "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", {b, h, q, k}, c.attn_weights)
        .show_heatmap_from(first, q > 1);
    t.add("context_vec_" + at, "Context vector" + std::string(q == 1 ? " of " : "s of ") + who,
          "Weights times the cached values, heads combined, then out_proj: " + shape_tuple({b, q, d_out}) +
              ", what the model's next layer gets for " + (q == 1 ? "this token." : "these tokens."),
          std::string(grouped ? "values = values.repeat_interleave(self.group_size, dim=1)\n" : "") +
              "context_vec = (attn_weights @ values).transpose(1, 2)\n"
              "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)\n"
              "context_vec = self.out_proj(context_vec)",
          {b, q, d_out}, c.context_vec);
  }

  // The pitfall: the tokens after the prompt in one call, masked with the mask's first rows.
  const std::size_t chunk = n - prompt;
  const CachedCall& prompt_call = *calls.front();
  const CachedCall wrong(t, m, batch.value, prompt, chunk, &prompt_call,
                         [n, chunk] { return causal_mask_rows(0, chunk, n); });
  const std::string chunk_call = m.name + "(batch[:, " + std::to_string(prompt) + ":" + std::to_string(n) +
                                 "], use_cache=True)  # the rest in one call: num_tokens_Q = " +
                                 std::to_string(chunk) + ", num_tokens_K = " + std::to_string(n);
  const std::string c_ = std::to_string(chunk), n_ = std::to_string(n), p_ = std::to_string(prompt);
  const std::string pitfall =
      chunk == 1
          ? "Take the token after the prompt: 1 query against " + n_ + " cached keys. An earlier version of the bonus "
            "code sliced self.mask.bool()[:num_tokens, :num_tokens], a (1, 1) mask for (1, " + n_ + ") scores: a "
            "single False that broadcasts over them, right for one token, which is why token-by-token decoding "
            "never shows the bug. Slicing [:num_tokens_Q, :num_tokens_K] fits the scores too, but takes row 0: the "
            "query at position " + p_ + " gets the mask of position 0."
          : "Suppose the " + c_ + " tokens after the prompt came in one call (a long prompt cached in chunks, or "
            "a second message): " + c_ + " queries against " + n_ + " cached keys. An earlier version of the bonus "
            "code sliced self.mask.bool()[:num_tokens, :num_tokens], a (" + c_ + ", " + c_ + ") mask that does "
            "not fit (" + c_ + ", " + n_ + ") scores, so PyTorch stops with a size mismatch (with one token per "
            "call it is a single False that broadcasts, which is why token-by-token decoding never shows the bug). "
            "Slicing [:num_tokens_Q, :num_tokens_K] fits, but takes rows 0 to " + std::to_string(chunk - 1) +
            ": the query at position " + p_ + " + i gets row i, the mask of an earlier position.";
  t.add("mask_unshifted", "The pitfall: a chunk masked with the mask's first rows", pitfall,
        chunk_call + "\nmask_bool = self.mask.bool()[:num_tokens_Q, :num_tokens_K]  # the pitfall (shown: 0/1)",
        {chunk, n}, wrong.mask);
  t.add("attn_weights_unshifted", "What the unshifted mask computes: wrong weights, and no error",
        "Each query of the chunk is hidden keys it should see: the query at position " + std::to_string(prompt) +
            " gets only " + count_of(1, "key") + " instead of " + std::to_string(prompt + 1) + ". Compare attn_weights_" +
            std::to_string(prompt) + " above. Nothing fails; the model just reads less of its past.",
        "attn_scores.masked_fill_(mask_bool, -torch.inf)\n"
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)",
        {b, h, chunk, n}, wrong.attn_weights)
      .show_heatmap_from(prompt, false);
  t.add("mask_ptr", "The fix: the mask rows from ptr_current_pos",
        "ptr_current_pos counts the tokens cached before the call (" + std::to_string(prompt) +
            " here), so the slice starts at the chunk's own positions: each query is hidden exactly the keys after "
            "it. The same slice serves every call: the prompt (ptr 0, the triangle) and single tokens (one row, "
            "all zeros over the cached keys). reset_cache() sets it back to 0.",
        "mask_bool = self.mask.bool()[self.ptr_current_pos:self.ptr_current_pos + num_tokens_Q, :num_tokens_K]\n"
        "self.ptr_current_pos += num_tokens_Q",
        {chunk, n}, [n, prompt, chunk] { return causal_mask_rows(prompt, chunk, n); });

  // 1. Equivalence with the full causal forward.
  const auto cached = t.lazy<Tensor3>([&] {
    Tensor3 out = xt::empty<float>({b, n, d_out});  // (b, num_tokens, d_out)
    for (const auto& c : calls)
      xt::view(out, xt::all(), xt::range(c->first, c->first + c->count)) = c->context_vec();
    return out;
  });
  const auto full = t.lazy<Tensor3>([&] {
    const MultiHeadSteps p(t, batch.value, *m.W_query, *m.W_key, *m.W_value, *m.out_proj, h, kv, 0.0, gen,
                           DropoutRng::Default);
    return p.context_vecs();  // (b, num_tokens, d_out)
  });
  // The full forward's intermediates, held until it returns: scores, masked, weights (and their dropout
  // copy) per head, and about ten (b, num_tokens, d_out) projections, head views and outputs. The calls'
  // inputs x, batch[:, first:first + count], stay in their Lazy values: one batch in all.
  t.needs_temporarily(saturating_sum(saturating_product({4, b, h, n, n}), saturating_product({10, b, n, d_out})));
  t.holds(saturating_product({b, n, d_in}));
  const std::string& mod = m.name;
  const std::string calls_code =
      prompt == 1 ? mod + ".reset_cache()\ncontext_vecs_cached = torch.cat([" + mod +
                        "(batch[:, t:t+1], use_cache=True)\n"
                        "                                 for t in range(num_tokens)], dim=1)"
                  : mod + ".reset_cache()\ncontext_vecs_cached = torch.cat([" + mod + "(batch[:, :" +
                        std::to_string(prompt) + "], use_cache=True)] +\n"
                        "                                [" + mod + "(batch[:, t:t+1], use_cache=True)\n"
                        "                                 for t in range(" + std::to_string(prompt) +
                        ", num_tokens)], dim=1)";
  t.add("context_vecs_cached", "Every decoded row, side by side",
        "The calls' outputs concatenated on the token dimension: (b, num_tokens, d_out). Each row was computed "
        "from the cache, when its token was the newest.",
        calls_code, {b, n, d_out}, cached);
  t.add("context_vecs", "The full causal forward, all tokens at once",
        "What " + full_lesson + " computes: every token in one call, the causal mask "
        "hiding the future." + (grouped ? "" : " With the defaults these are the book's context_vecs of section 3.6.2."),
        mod + ".reset_cache()\ncontext_vecs = " + mod + "(batch)  # use_cache=False", {b, n, d_out}, full);
  t.add("max_abs_diff", "Decoded with the cache, or all at once: the largest difference",
        "tensor(0.): every number is the same float, so decoding with the cache gives the full forward's numbers "
        "bit for bit (the book's six tokens, for one). On longer inputs a few sums may be added in another "
        "order (a long row is summed in vector lanes, a short one is not), and this is the largest difference, "
        "around 1e-7: rounding, not a different result.",
        "(context_vecs_cached - context_vecs).abs().max()", {}, [&] {
          const Tensor3 difference = xt::abs(cached() - full());  // (b, num_tokens, d_out)
          return Scalar(max_of(AnyTensor(difference)));          // NaN if a difference is NaN, as .max() gives
        });

  // 2. Cost: multiply-adds per call, from the shapes alone.
  const auto macs = [&](std::size_t q, std::size_t k) { return macs_of(q, k, d_in, d_out, kv * hd, h, hd); };
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
  const auto ratio_text = [](std::size_t a, std::size_t c) {
    return fixed(static_cast<double>(a) / static_cast<double>(c), 1);
  };
  // GPT-2 small's attention (d_in = d_out = 768, 12 heads of 64) generating 1,024 tokens one by one.
  std::size_t gpt2_full = 0, gpt2_cached = 0;
  for (std::size_t k = 1; k <= 1024; ++k) {
    gpt2_full += macs_of(k, k, 768, 768, 768, 12, 64);
    gpt2_cached += macs_of(1, k, 768, 768, 768, 12, 64);
  }
  t.add("macs", "Multiply-adds per call, without and with the cache",
        "One row per call: tokens in context (num_tokens_K), then the multiply-adds of one sequence without a "
        "cache, where every call recomputes the whole prefix (its projections, a K x K block of scores and of "
        "weights @ values per head, out_proj), and with it, where a call computes only its new tokens (one row "
        "of K scores per head). Without the cache the cost of a token grows with K squared, with it linearly.",
        "def macs_of(Q, K):  # Q new tokens against K cached keys, one sequence\n"
        "    return (Q * d_in * (d_out + 2 * " + std::string(grouped ? "num_kv_groups" : "num_heads") +
            " * head_dim)  # W_query, W_key, W_value\n"
            "            + 2 * num_heads * Q * K * head_dim  # queries @ keys.T, attn_weights @ values\n"
            "            + Q * d_out * d_out)  # out_proj\n"
            "rows = [[K, macs_of(K, K), macs_of(Q, K)] for Q, K in calls]  # Python ints, exact\n"
            "macs = torch.tensor(rows, dtype=torch.float)",
        cost);
  t.add("macs_total", "All " + std::to_string(n) + " tokens: without the cache, with it",
        "Decoding this input costs " + with_commas(total_full) + " multiply-adds without the cache and " +
            with_commas(total_cached) + " with it, " + ratio_text(total_full, total_cached) +
            " times fewer. The gap grows with the sequence: GPT-2 small's attention generating 1,024 tokens "
            "needs " + with_commas(gpt2_full) + " without and " + with_commas(gpt2_cached) + " with it, " +
            ratio_text(gpt2_full, gpt2_cached) + " times fewer.",
        "torch.tensor([sum(r[1] for r in rows), sum(r[2] for r in rows)], dtype=torch.float)", Vector{static_cast<float>(total_full), static_cast<float>(total_cached)});

  // 3. Memory: what the cache holds, and what grouped-query attention saves.
  const std::size_t cache_bytes = saturating_product({2, b, n, kv, hd, sizeof(float)});
  t.add("cache_bytes", "The cache's memory: " + with_commas(cache_bytes) + " bytes",
        "cache_k and cache_v, " + shape_tuple({b, n, kv, hd}) + " each, in float32 (4 bytes): b x num_tokens x " +
            (grouped ? "num_kv_groups" : "num_heads") + " x head_dim x 2 x 4. It grows by one token per call, in "
            "every attention layer of a model. For a real model's size: attn kv-cache --estimate.",
        "(" + mod + ".cache_k.numel() + " + mod + ".cache_v.numel()) * " + mod + ".cache_k.element_size()",
        Scalar(static_cast<float>(cache_bytes)))
      .python_int = static_cast<std::int64_t>(cache_bytes);
  std::vector<std::size_t> divisors;
  for (std::size_t g = h; g >= 1; --g)
    if (h % g == 0) divisors.push_back(g);
  Matrix by_groups = xt::empty<float>({divisors.size(), std::size_t{2}});  // (choices, 2)
  for (std::size_t i = 0; i < divisors.size(); ++i) {
    by_groups(i, 0) = static_cast<float>(divisors[i]);
    by_groups(i, 1) = static_cast<float>(saturating_product({2, b, n, divisors[i], hd, sizeof(float)}));
  }
  t.add("cache_bytes_by_kv_heads", "What grouped-query attention saves",
        "One row for each number of key/value heads num_heads can be grouped into, with the cache it needs here. "
        "Grouped-query attention (--kv-groups G) caches G heads, each read by num_heads / G query heads through "
        "repeat_interleave: the cache shrinks by num_heads / G, and the queries keep their own heads. This run "
        "caches " + count_of(kv, "key/value head") + (grouped ? "." : " (MultiHeadAttention: one per query head)."),
        "torch.tensor([[G, 2 * b * num_tokens * G * head_dim * 4]\n"
        "              for G in range(num_heads, 0, -1) if num_heads % G == 0], dtype=torch.float)",
        by_groups);
  t.resolve();
  return t;
}

// The KV cache's memory for a model, MHA and GQA side by side: `attn kv-cache --estimate`, and
// `attn gqa --kv-cache`, where it began.
Trace run_kv_cache_estimate(const LessonInfo& info, const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
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
                     {Opt::Layers, ""},
                     {Opt::ContextLength, ""},
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
                      "Decode with GroupedQueryAttention and this many key/value heads, each cached once and read by "
                      "heads / kv-groups query heads (without it: MultiHeadAttention, one per head)",
                      "none"},
                     {Opt::DOut, "Output dimension of the whole module, split over the heads"},
                     {Opt::Batch, ""},
                     {Opt::Seed, seed_help("123")},
                     {Opt::QkvBias, ""}},
                    book,
                    run_kv_cache};
  return {kv_cache_info(),
          {lesson, kv_cache_estimate_mode(kv_cache_info(), Opt::Estimate,
                                          "Instead of the lesson: the KV-cache memory of MHA vs GQA for a model "
                                          "(defaults: a Llama-like 4096-dim, 32-head, 32-layer model with 8 "
                                          "key/value heads, 32,768 tokens, batch 1, bf16)")},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "512x64", "--d-out", "64", "--heads", "8", "--batch", "2"},
                      {"--random", "256x64", "--d-out", "64", "--heads", "8", "--kv-groups", "2", "--prompt", "200"},
                      {"--random", "256x32", "--d-out", "32", "--heads", "4", "--json"}},
                     {"--d-out", "16", "--heads", "4"}}};
}

}  // namespace attn
