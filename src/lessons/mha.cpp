// attn mha — 3.6.2 Implementing multi-head attention with weight splits. One projection each for
// queries, keys and values; view and transpose split them into heads that attend in parallel; an
// output projection mixes the heads' results.
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "modules/attention.hpp"
#include "core/terminal_text.hpp"
#include "model/gpt2_model.hpp"
#include "inputs/text.hpp"
#include "lessons/lessons.hpp"
#include "lessons/multi_head.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo mha_info() { return LessonText::info("mha", "3.6.2"); }

namespace {

using Ranking = std::vector<std::pair<float, std::int64_t>>;  // (probability, token id), best first

// GPT-2's five most likely next tokens after this layer, best first.
Ranking top5_of(const Inputs& in) {
  const ModelLayer& m = *in.model;
  const Vector logits = m.model->next_token_logits(m.block_input, m.layer);  // (vocab_size,)
  const Vector probas = softmax(logits);                                    // (vocab_size,)
  Ranking best;
  for (std::size_t i = 0; i < probas.size(); ++i) best.push_back({probas(i), static_cast<std::int64_t>(i)});
  std::partial_sort(best.begin(), best.begin() + 5, best.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  best.resize(5);
  return best;
}

// --model: what GPT-2 itself makes of the text, after this layer: the rest of its blocks, the final norm and
// the output head (tied to the token embeddings), then the five most likely next tokens, as chapter 4's
// generate_text_simple would pick from.
void add_next_token_steps(const LessonText& text, const Inputs& in, const Selection& sel) {
  Trace& t = text.trace();
  const ModelLayer& m = *in.model;
  const Gpt2Model& model = *m.model;
  const auto top5 = t.lazy<Ranking>(top5_of, t.input());  // read by both steps
  t.holds(saturating_product({2, model.config().vocab_size}));
  // The tokens themselves belong in the explanation, so the ranking is computed now when it is shown.
  std::string words = text.phrase("ids_as_text");
  if (!sel.plan_only && (sel.shows("top5_token_ids") || sel.shows("top5_probas"))) {
    words.clear();
    for (const auto& [p, id] : top5()) {
      char percent[32];
      std::snprintf(percent, sizeof percent, " %.1f%%", 100.0 * p);
      // The vocabulary is a file from outside: token_repr shows it as Python would, never as it is.
      words += (words.empty() ? "" : ", ") + token_repr(model.tokenizer().decode(id)) + " " +
               std::to_string(id) + percent;
    }
  }
  const LessonText ranked = text.with({{"layer", std::to_string(m.layer)},
                                       {"last_layer", std::to_string(model.config().n_layer - 1)},
                                       {"words", words}});
  ranked.add("top5_token_ids", {5}, [](const Ranking& top5) {
    Vector ids = xt::empty<float>({std::size_t{5}});  // (5,)
    for (std::size_t i = 0; i < 5; ++i) ids(i) = static_cast<float>(top5[i].second);
    return ids;
  }, top5)
      .integer = true;
  ranked.add("top5_probas", {5}, [](const Ranking& top5) {
    Vector p = xt::empty<float>({std::size_t{5}});  // (5,)
    for (std::size_t i = 0; i < 5; ++i) p(i) = top5[i].first;
    return p;
  }, top5);
}

// The module as the book builds it (under --model with the real layer's weights, drawn first all the same
// so that dropout draws as the book's code would), and its parameters as steps.
Node<MultiHeadAttention> add_module(const LessonText& text, const Inputs& in, const LessonConfig& cfg,
                                    const std::string& ctor, TorchGenerator& gen) {
  Trace& t = text.trace();
  MultiHeadAttention mha(in.d_in(), cfg.d_out, cfg.dropout, cfg.heads, cfg.qkv_bias, gen);
  if (in.model) {
    use_real_layer(in, mha.W_query, mha.W_key, mha.W_value, mha.out_proj);
    t.notes.push_back(model_note(in, cfg, ModelUse::Layer, t.words));
  }
  t.modules.push_back({"mha", ctor, mha.num_parameters()});
  t.notes.push_back(text.phrase("heads_note"));
  add_linear_steps(text, "mha.W_query", mha.W_query, text.phrase("role_query"));
  add_linear_steps(text, "mha.W_key", mha.W_key, text.phrase("role_key"));
  add_linear_steps(text, "mha.W_value", mha.W_value, text.phrase("role_value"));
  add_linear_steps(text, "mha.out_proj", mha.out_proj, text.phrase("role_out_proj"));
  text.run_first("mha.W_query.weight", text.phrase("notebook_module"));
  add_num_params_step(text, "mha", mha.num_parameters());
  return t.keep(std::move(mha));
}

// x.view(b, num_tokens, num_heads, head_dim)
Tensor4 split(const Tensor3& x, std::size_t h, std::size_t hd) {
  Tensor4 v = xt::reshape_view(x, {x.shape(0), x.shape(1), h, hd});  // (b, num_tokens, num_heads, head_dim)
  return v;
}

// The projections, their views as heads and the transpose that puts heads first. Returns the query and key
// views, which labml.ai's formulation reads again.
std::pair<Node<Tensor4>, Node<Tensor4>> add_head_split_steps(const LessonText& text, const MultiHeadSteps& p,
                                                             std::size_t b, std::size_t n) {
  Trace& t = text.trace();
  const std::size_t h = p.num_heads, hd = p.head_dim, d_out = h * hd;
  text.add("queries", {b, n, d_out}, p.queries_proj);
  text.add("keys", {b, n, d_out}, p.keys_proj);
  text.add("values", {b, n, d_out}, p.values_proj);

  const auto queries_view = t.lazy<Tensor4>(split, p.queries_proj, h, hd);  // (b, n, h, hd)
  const auto keys_view = t.lazy<Tensor4>(split, p.keys_proj, h, hd);        // (b, n, h, hd)
  text.add("queries_view", {b, n, h, hd}, queries_view);
  text.add("keys_view", {b, n, h, hd}, keys_view);
  text.add("values_view", {b, n, h, hd}, split, p.values_proj, h, hd);

  text.add("queries_heads", {b, h, n, hd}, p.queries);
  text.add("keys_heads", {b, h, n, hd}, p.keys);
  text.add("values_heads", {b, h, n, hd}, p.values);
  return {queries_view, keys_view};
}

// The chapter's example of a batched product over heads, on its own tensor a: (1, 2, 3, 4).
void add_batched_product_steps(const LessonText& text) {
  const Tensor4 a{{{{0.2745f, 0.6584f, 0.2775f, 0.8573f}, {0.8993f, 0.0390f, 0.9268f, 0.7388f},
                    {0.7179f, 0.7058f, 0.9156f, 0.4340f}},
                   {{0.0772f, 0.3565f, 0.1479f, 0.5331f}, {0.4066f, 0.2318f, 0.4545f, 0.9737f},
                    {0.4606f, 0.5159f, 0.4220f, 0.5786f}}}};  // (b, num_heads, num_tokens, head_dim)
  text.add("a", a);
  const auto a_matmul = [](const Tensor4& a) {
    const Tensor3 heads_of_a = xt::reshape_view(a, {std::size_t{2}, std::size_t{3}, std::size_t{4}});  // (heads, 3, 4)
    const Tensor3 products = bmm(heads_of_a, heads_of_a, /*transpose_b=*/true);                        // (heads, 3, 3)
    Tensor4 out = xt::reshape_view(products, {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{3}});
    return out;  // (1, 2, 3, 3)
  };
  text.add("a_matmul", {1, 2, 3, 3}, a_matmul, a);
  const Matrix first_head = xt::view(a, 0, 0, xt::all(), xt::all());   // (num_tokens, head_dim)
  const Matrix second_head = xt::view(a, 0, 1, xt::all(), xt::all());  // (num_tokens, head_dim)
  const auto head_products = [](const Matrix& head) { return matmul(head, head, /*transpose_b=*/true); };  // (3, 3)
  text.add("first_res", {3, 3}, head_products, first_head);
  text.add("second_res", {3, 3}, head_products, second_head);
}

// einsum('ibhd,jbhd->ijbh', query, key): labml.ai's scores, (num_tokens, num_tokens, b, num_heads).
Tensor4 einsum_scores(const Tensor4& query, const Tensor4& key) {
  const std::size_t n = query.shape(0), b = query.shape(1), h = query.shape(2), hd = query.shape(3);
  // einsum puts the batch letters b, h first and contracts d with one bmm, as here. With head_dim 1 there
  // is nothing to contract: einsum squeezes d and multiplies, so each score is the one product q * k,
  // signed zeros and all (a bmm adds it to +0, which turns -0.0 into 0.0).
  if (hd == 1) {
    Tensor4 out = xt::empty<float>({n, n, b, h});  // (n, n, b, h): ijbh
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t bi = 0; bi < b; ++bi)
          for (std::size_t hi = 0; hi < h; ++hi) out(i, j, bi, hi) = query(i, bi, hi, 0) * key(j, bi, hi, 0);
    return out;
  }
  const Tensor3 query_bh = xt::reshape_view(Tensor4(xt::transpose(query, {1, 2, 0, 3})), {b * h, n, hd});  // (b*h, n, hd)
  const Tensor3 key_bh = xt::reshape_view(Tensor4(xt::transpose(key, {1, 2, 0, 3})), {b * h, n, hd});      // (b*h, n, hd)
  const Tensor3 contracted = bmm(query_bh, key_bh, /*transpose_b=*/true);                                  // (b*h, n, n)
  return Tensor4(xt::transpose(xt::reshape_view(contracted, {b, h, n, n}), {2, 3, 0, 1}));  // (n, n, b, h): ijbh
}

// x.permute(1, 0, 2, 3): (b, n, h, hd) sequence first, (n, b, h, hd), and back.
Tensor4 sequence_first(const Tensor4& x) { return Tensor4(xt::transpose(x, {1, 0, 2, 3})); }

// The same scores as labml.ai's annotated multi-head attention computes them: tensors laid out sequence
// first, (num_tokens, b, num_heads, head_dim), and one einsum over head_dim.
void add_einsum_steps(const LessonText& text, const MultiHeadSteps& p, const Node<Tensor4>& queries_view,
                      const Node<Tensor4>& keys_view, std::size_t b, std::size_t n) {
  Trace& t = text.trace();
  const std::size_t h = p.num_heads, hd = p.head_dim;
  const auto query = t.lazy<Tensor4>(sequence_first, queries_view);  // (n, b, h, hd)
  const auto key = t.lazy<Tensor4>(sequence_first, keys_view);       // (n, b, h, hd)
  const auto scores = t.lazy<Tensor4>(einsum_scores, query, key);    // (n, n, b, h)
  text.add("einsum_query", {n, b, h, hd}, query);
  text.add("einsum_key", {n, b, h, hd}, key);
  text.add("einsum_scores", {n, n, b, h}, scores);
  const auto scores_bhij = t.lazy<Tensor4>([](const Tensor4& scores) {
    return Tensor4(xt::transpose(scores, {2, 3, 0, 1}));
  }, scores);  // (b, h, n, n)
  text.add("einsum_scores_permuted", {b, h, n, n}, scores_bhij);
  text.add("einsum_max_diff", {}, [](const Tensor4& scores_bhij, const AnyTensor& attn_scores) {
    const Tensor4 difference = xt::abs(scores_bhij - attn_scores);  // (b, h, n, n)
    return Scalar(max_of(AnyTensor(difference)));  // NaN if a difference is (inf - inf), as .max() gives
  }, scores_bhij, p.attn_scores);
}

}  // namespace

ResolvedTrace run_mha(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(mha_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::Layer, t);
  check_heads(cfg, false);
  check_elements("the (b, num_heads, num_tokens, num_tokens) attention weights",
                 {cfg.batch, cfg.heads, in.num_tokens(), in.num_tokens()});
  check_elements("the (b, num_tokens, d_out) projections", {cfg.batch, in.num_tokens(), cfg.d_out});
  const std::uint64_t seed = cfg.seed.value_or(123);
  const std::size_t b = cfg.batch, n = in.num_tokens(), h = cfg.heads, hd = cfg.d_out / cfg.heads;
  t.config["manual_seeds"] = {seed};
  const std::string ctor = "MultiHeadAttention(d_in, d_out, context_length, " + py_float(cfg.dropout) +
                           ", num_heads=" + std::to_string(h) + (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")";

  LessonText text(t, "mha");
  text.set("shape_bnhd", shape_tuple({b, n, h, hd})).set("shape_bhnd", shape_tuple({b, h, n, hd}));
  text.set("h", h).set("hd", hd).set("seed", seed).set("ctor", ctor).set("d_out", cfg.d_out);
  text.set("real_mha", real_layer_run(text, in, "mha"));
  const Node<Tensor3> batch = add_batch_step(text, b);  // (b, num_tokens, d_in)

  const State<TorchGenerator> gen = t.state(TorchGenerator(seed));
  const Node<MultiHeadAttention> mha = add_module(text, in, cfg, ctor, *gen);
  // Figure 3.26: the one large W_query is the heads' own query weights stacked; each head uses its rows.
  text.add("W_query_heads", {h, hd, in.d_in()}, [](const MultiHeadAttention& mha, std::size_t h, std::size_t hd) {
    const std::size_t d_in = mha.W_query.weight.shape(1);
    return Tensor3(xt::reshape_view(mha.W_query.weight, {h, hd, d_in}));  // (num_heads, head_dim, d_in)
  }, mha, h, hd);
  using MHA = MultiHeadAttention;
  const MultiHeadSteps p(t, batch, mha.part(&MHA::W_query), mha.part(&MHA::W_key), mha.part(&MHA::W_value),
                         mha.part(&MHA::out_proj), h, h, cfg.dropout, gen, cfg.dropout_rng);

  const auto [queries_view, keys_view] = add_head_split_steps(text, p, b, n);
  add_batched_product_steps(text);
  text.add("attn_scores", {b, h, n, n}, p.attn_scores);
  add_einsum_steps(text, p, queries_view, keys_view, b, n);
  text.add("masked", {b, h, n, n}, p.masked)
      .show_heatmap(true);
  text.add("attn_weights", {b, h, n, n}, p.attn_weights)
      .show_heatmap(true);
  text.add("attn_weights_dropout", {b, h, n, n}, p.attn_weights_dropout)
      .show_heatmap(true);
  text.add("context_vec_heads", {b, n, h, hd}, p.context_heads);
  text.add("context_vec", {b, n, cfg.d_out}, p.context_combined);
  text.add("context_vecs", {b, n, cfg.d_out}, p.context_vecs);
  if (in.model) add_next_token_steps(text, in, sel);
  return t.resolve();
}

Lesson mha_lesson() {
  return {mha_info(),
          {{{{Opt::Heads, ""},
             {Opt::DOut, option_help("mha", "d_out")},
             {Opt::Dropout, option_help("mha", "dropout")},
             {Opt::DropoutRng, ""},
             {Opt::Batch, ""},
             {Opt::Seed, seed_help(option_help("mha", "seeds"))},
             {Opt::QkvBias, ""}},
            LessonConfig{},
            run_mha}},
          // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the estimate,
          // and the options of its largest --random Nx16 input under the budget.
          MemoryRuns{{{"--random", "512x64", "--d-out", "64", "--heads", "8", "--batch", "2", "--dropout", "0.1"},
                      {"--random", "512x64", "--d-out", "64", "--heads", "8", "--step", "attn_weights"}},
                     {"--d-out", "16", "--heads", "4"}}};
}

}  // namespace attn
