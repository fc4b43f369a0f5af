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
static LessonInfo mha_info() {
  return {"mha", "3.6.2", "Implementing multi-head attention with weight splits", "MultiHeadAttention: one projection split into heads by view and transpose"};
}

// --model: what GPT-2 itself makes of the text, after this layer: the rest of its blocks, the final norm and
// the output head (tied to the token embeddings), then the five most likely next tokens, as chapter 4's
// generate_text_simple would pick from.
static void add_next_token_steps(Trace& t, const Inputs& in, const Selection& sel) {
  const ModelLayer& m = *in.model;
  const Gpt2Model& model = *m.model;
  using Ranking = std::vector<std::pair<float, std::int64_t>>;  // (probability, token id), best first
  // Shared by the two steps' functions, which outlive this function (they run in t.resolve()).
  const auto top5 = std::make_shared<Lazy<Ranking>>(t.values_computed, std::function<Ranking()>([&m, &model] {
    const Vector logits = model.next_token_logits(m.block_input, m.layer);  // (vocab_size,)
    const Vector probas = softmax(logits);                                 // (vocab_size,)
    std::vector<std::pair<float, std::int64_t>> best;
    for (std::size_t i = 0; i < probas.size(); ++i) best.push_back({probas(i), static_cast<std::int64_t>(i)});
    std::partial_sort(best.begin(), best.begin() + 5, best.end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    best.resize(5);
    return best;
  }));
  t.holds(saturating_product({2, model.config().vocab_size}));
  // The tokens themselves belong in the explanation, so the ranking is computed now when it is shown.
  std::string words = "the ids above, as text";
  if (!sel.plan_only && (sel.shows("top5_token_ids") || sel.shows("top5_probas"))) {
    words.clear();
    for (const auto& [p, id] : (*top5)()) {
      char percent[32];
      std::snprintf(percent, sizeof percent, " %.1f%%", 100.0 * p);
      // The vocabulary is a file from outside: its text is made visible, never trusted to print as it is.
      words += (words.empty() ? "" : ", ") + visible(py_repr(gpt2_readable(model.tokenizer().decode(id)))) + " " +
               std::to_string(id) + percent;
    }
  }
  const std::string rest = "logits = model(token_ids[None])  # blocks " + std::to_string(m.layer) + " to " +
                           std::to_string(model.config().n_layer - 1) + ", final_norm, out_head\n"
                           "probas = torch.softmax(logits[0, -1], dim=-1)\ntop5 = torch.topk(probas, 5)";
  t.add("top5_token_ids", "GPT-2's five likeliest next tokens",
        "The rest of the model runs on: this block and every later one, the final LayerNorm, and the output head, "
        "which shares the token embeddings' weights. The last token's logits, through softmax, rank the whole "
        "vocabulary; these are the ids of the top five.",
        rest + "\ntop5.indices", {5}, [top5] {
          Vector ids = xt::empty<float>({std::size_t{5}});  // (5,)
          for (std::size_t i = 0; i < 5; ++i) ids(i) = static_cast<float>((*top5)()[i].second);
          return ids;
        })
      .integer = true;
  t.add("top5_probas", "... and how likely each is",
        "Their probabilities, what the model would sample from: " + words + ".", "top5.values",
        {5}, [top5] {
          Vector p = xt::empty<float>({std::size_t{5}});  // (5,)
          for (std::size_t i = 0; i < 5; ++i) p(i) = (*top5)()[i].first;
          return p;
        });
}

Trace run_mha(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(mha_info(), in, sel);
  const LessonConfig cfg = model_config(given, in, ModelUse::Layer, t);
  check_heads(cfg, false);
  check_elements("the (b, num_heads, num_tokens, num_tokens) attention weights",
                 {cfg.batch, cfg.heads, in.num_tokens(), in.num_tokens()});
  check_elements("the (b, num_tokens, d_out) projections", {cfg.batch, in.num_tokens(), cfg.d_out});
  const std::uint64_t seed = cfg.seed.value_or(123);
  const std::size_t b = cfg.batch, n = in.num_tokens(), h = cfg.heads, hd = cfg.d_out / cfg.heads;
  const std::string shape_bnhd = "(b, num_tokens, num_heads, head_dim) = (" + std::to_string(b) + ", " +
                                 std::to_string(n) + ", " + std::to_string(h) + ", " + std::to_string(hd) + ")";
  const std::string shape_bhnd = "(b, num_heads, num_tokens, head_dim) = (" + std::to_string(b) + ", " +
                                 std::to_string(h) + ", " + std::to_string(n) + ", " + std::to_string(hd) + ")";
  t.config["manual_seeds"] = {seed};
  const std::string ctor = "MultiHeadAttention(d_in, d_out, context_length, " + py_float(cfg.dropout) +
                           ", num_heads=" + std::to_string(h) + (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")";

  const BatchStep batch(t, in.embeddings, b);  // (b, num_tokens, d_in)

  TorchGenerator gen(seed);
  MultiHeadAttention mha(in.d_in(), cfg.d_out, cfg.dropout, h, cfg.qkv_bias, gen);
  if (in.model) {  // the real layer, drawn first all the same so that dropout draws as the book's code would
    const Gpt2Attention& real = in.model->attention;
    mha.W_query = real.W_query;
    mha.W_key = real.W_key;
    mha.W_value = real.W_value;
    mha.out_proj = real.out_proj;
    t.notes.push_back(model_note(in, cfg, ModelUse::Layer));
  }
  t.modules.push_back({"mha", ctor, mha.num_parameters()});
  t.notes.push_back("num_heads = " + std::to_string(h) + ", head_dim = d_out / num_heads = " + std::to_string(hd));
  add_linear_steps(t, "mha.W_query", mha.W_query, "projects each token to the queries of all heads at once");
  add_linear_steps(t, "mha.W_key", mha.W_key, "projects each token to the keys of all heads");
  add_linear_steps(t, "mha.W_value", mha.W_value, "projects each token to the values of all heads");
  add_linear_steps(t, "mha.out_proj", mha.out_proj, "mixes the heads' concatenated outputs");
  add_num_params_step(t, "mha", mha.num_parameters());
  // Figure 3.26: the one large W_query is the heads' own query weights stacked; each head uses its rows.
  t.add("W_query_heads", "W_query is every head's query weight, stacked",
        "Rows h * head_dim to (h + 1) * head_dim of W_query.weight are head h's own Wq (figure 3.26's Wq1, Wq2): "
        "one product with the large matrix computes every head's queries.",
        "mha.W_query.weight.view(num_heads, head_dim, d_in)  # [0] is Wq1, [1] is Wq2, ...", {h, hd, in.d_in()},
        [&] { return Tensor3(xt::reshape_view(mha.W_query.weight, {h, hd, in.d_in()})); });  // (num_heads, head_dim, d_in)
  const MultiHeadSteps p(t, batch.value, mha.W_query, mha.W_key, mha.W_value, mha.out_proj, h, h, cfg.dropout, gen,
                         cfg.dropout_rng);

  const std::string proj = "One matrix product projects all heads at once: (b, num_tokens, d_out).";
  t.add("queries", "Queries, all heads together", proj, "queries = self.W_query(x)", {b, n, cfg.d_out}, p.queries_proj);
  t.add("keys", "Keys, all heads together", proj, "keys = self.W_key(x)", {b, n, cfg.d_out}, p.keys_proj);
  t.add("values", "Values, all heads together", proj, "values = self.W_value(x)", {b, n, cfg.d_out}, p.values_proj);

  const std::string view = "view splits the last dimension into heads without moving any number: " + shape_bnhd + ".";
  const auto split = [&](const Tensor3& x) {
    Tensor4 v = xt::reshape_view(x, {b, n, h, hd});  // (b, num_tokens, num_heads, head_dim)
    return v;
  };
  // Read again by labml.ai's formulation below.
  const auto queries_view = t.lazy<Tensor4>([&] { return split(p.queries_proj()); });  // (b, n, h, hd)
  const auto keys_view = t.lazy<Tensor4>([&] { return split(p.keys_proj()); });        // (b, n, h, hd)
  t.add("queries_view", "Queries split into heads", view,
        "queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)", {b, n, h, hd}, queries_view);
  t.add("keys_view", "Keys split into heads", view, "keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)",
        {b, n, h, hd}, keys_view);
  t.add("values_view", "Values split into heads", view,
        "values = values.view(b, num_tokens, self.num_heads, self.head_dim)", {b, n, h, hd},
        [&] { return split(p.values_proj()); });

  const std::string tr = "transpose(1, 2) puts the head before the token, " + shape_bhnd +
                         ", so each head is a separate (num_tokens, head_dim) matrix.";
  t.add("queries_heads", "Queries, one matrix per head", tr, "queries = queries.transpose(1, 2)", {b, h, n, hd}, p.queries);
  t.add("keys_heads", "Keys, one matrix per head", tr, "keys = keys.transpose(1, 2)", {b, h, n, hd}, p.keys);
  t.add("values_heads", "Values, one matrix per head", tr, "values = values.transpose(1, 2)", {b, h, n, hd}, p.values);

  // The chapter's example of a batched product over heads, on its own tensor a: (1, 2, 3, 4).
  const Tensor4 a{{{{0.2745f, 0.6584f, 0.2775f, 0.8573f}, {0.8993f, 0.0390f, 0.9268f, 0.7388f},
                    {0.7179f, 0.7058f, 0.9156f, 0.4340f}},
                   {{0.0772f, 0.3565f, 0.1479f, 0.5331f}, {0.4066f, 0.2318f, 0.4545f, 0.9737f},
                    {0.4606f, 0.5159f, 0.4220f, 0.5786f}}}};  // (b, num_heads, num_tokens, head_dim)
  t.add("a", "The book's example: a tensor shaped like the queries",
        "(b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4): the chapter's own numbers, to show what @ does on "
        "four dimensions.",
        "a = torch.tensor([[[[0.2745, 0.6584, 0.2775, 0.8573],\n"
        "                    [0.8993, 0.0390, 0.9268, 0.7388],\n"
        "                    [0.7179, 0.7058, 0.9156, 0.4340]],\n"
        "                   [[0.0772, 0.3565, 0.1479, 0.5331],\n"
        "                    [0.4066, 0.2318, 0.4545, 0.9737],\n"
        "                    [0.4606, 0.5159, 0.4220, 0.5786]]]])",
        a);
  const auto a_matmul = [&] {
    const Tensor3 heads_of_a = xt::reshape_view(a, {std::size_t{2}, std::size_t{3}, std::size_t{4}});  // (heads, 3, 4)
    const Tensor3 products = bmm(heads_of_a, heads_of_a, /*transpose_b=*/true);                        // (heads, 3, 3)
    Tensor4 out = xt::reshape_view(products, {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{3}});
    return out;  // (1, 2, 3, 3)
  };
  t.add("a_matmul", "A batched matrix product over the last two dimensions",
        "@ on four dimensions multiplies the last two, (num_tokens, head_dim) by (head_dim, num_tokens), once for "
        "every batch element and head: (1, 2, 3, 3).",
        "print(a @ a.transpose(2, 3))", {1, 2, 3, 3}, a_matmul);
  const Matrix first_head = xt::view(a, 0, 0, xt::all(), xt::all());   // (num_tokens, head_dim)
  const Matrix second_head = xt::view(a, 0, 1, xt::all(), xt::all());  // (num_tokens, head_dim)
  t.add("first_res", "The same for the first head alone", "Head 0's product on its own equals a_matmul[0, 0].",
        "first_head = a[0, 0, :, :]\nfirst_res = first_head @ first_head.T\nprint(\"First head:\\n\", first_res)",
        {3, 3}, [&] { return matmul(first_head, first_head, /*transpose_b=*/true); });
  t.add("second_res", "And the second head", "Head 1's product equals a_matmul[0, 1]: the batched @ does both at once.",
        "second_head = a[0, 1, :, :]\nsecond_res = second_head @ second_head.T\nprint(\"\\nSecond head:\\n\", second_res)",
        {3, 3}, [&] { return matmul(second_head, second_head, /*transpose_b=*/true); });

  t.add("attn_scores", "Attention scores of every head",
        "A batched matrix product scores every head at once: (b, num_heads, num_tokens, num_tokens).",
        "attn_scores = queries @ keys.transpose(2, 3)", {b, h, n, n}, p.attn_scores);

  // The same scores as labml.ai's annotated multi-head attention computes them: tensors laid out
  // sequence first, (num_tokens, b, num_heads, head_dim), and one einsum over head_dim.
  const auto query = t.lazy<Tensor4>([&] { return Tensor4(xt::transpose(queries_view(), {1, 0, 2, 3})); });  // (n, b, h, hd)
  const auto key = t.lazy<Tensor4>([&] { return Tensor4(xt::transpose(keys_view(), {1, 0, 2, 3})); });       // (n, b, h, hd)
  // einsum('ibhd,jbhd->ijbh') puts the batch letters b, h first and contracts d with one bmm, as here.
  // With head_dim 1 there is nothing to contract: einsum squeezes d and multiplies, so each score is the
  // one product q * k, signed zeros and all (a bmm adds it to +0, which turns -0.0 into 0.0).
  const auto scores = t.lazy<Tensor4>([&] {
    if (hd == 1) {
      const Tensor4& qs = query();  // (n, b, h, 1)
      const Tensor4& ks = key();    // (n, b, h, 1)
      Tensor4 out = xt::empty<float>({n, n, b, h});  // (n, n, b, h): ijbh
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          for (std::size_t bi = 0; bi < b; ++bi)
            for (std::size_t hi = 0; hi < h; ++hi) out(i, j, bi, hi) = qs(i, bi, hi, 0) * ks(j, bi, hi, 0);
      return out;
    }
    const Tensor3 query_bh = xt::reshape_view(Tensor4(xt::transpose(query(), {1, 2, 0, 3})), {b * h, n, hd});  // (b*h, n, hd)
    const Tensor3 key_bh = xt::reshape_view(Tensor4(xt::transpose(key(), {1, 2, 0, 3})), {b * h, n, hd});      // (b*h, n, hd)
    const Tensor3 contracted = bmm(query_bh, key_bh, /*transpose_b=*/true);                                    // (b*h, n, n)
    return Tensor4(xt::transpose(xt::reshape_view(contracted, {b, h, n, n}), {2, 3, 0, 1}));  // (n, n, b, h): ijbh
  });
  const std::string labml = "Another formulation of the same scores (labml.ai's annotated transformer): ";
  t.add("einsum_query", "Queries laid out sequence first",
        labml + "the view above with the token first, (num_tokens, b, num_heads, head_dim).",
        "query = queries.view(b, num_tokens, num_heads, head_dim).permute(1, 0, 2, 3)  # ibhd", {n, b, h, hd}, query);
  t.add("einsum_key", "Keys laid out sequence first", "The same for the keys: (num_tokens, b, num_heads, head_dim).",
        "key = keys.view(b, num_tokens, num_heads, head_dim).permute(1, 0, 2, 3)  # jbhd", {n, b, h, hd}, key);
  t.add("einsum_scores", "Every query against every key, by einsum",
        "einsum multiplies query i and key j along d (head_dim) for every batch element and head: "
        "(num_tokens, num_tokens, b, num_heads).",
        "scores = torch.einsum('ibhd,jbhd->ijbh', query, key)", {n, n, b, h}, scores);
  const auto scores_bhij = t.lazy<Tensor4>([&] { return Tensor4(xt::transpose(scores(), {2, 3, 0, 1})); });  // (b, h, n, n)
  t.add("einsum_scores_permuted", "Permuted into the chapter's layout",
        "permute(2, 3, 0, 1) moves b and num_heads to the front: this is attn_scores, number for number.",
        "scores.permute(2, 3, 0, 1)  # == queries @ keys.transpose(2, 3)", {b, h, n, n}, scores_bhij);
  t.add("einsum_max_diff", "The two formulations, checked",
        "0: einsum and the batched @ compute the same products.",
        "(scores.permute(2, 3, 0, 1) - attn_scores).abs().max()", {}, [&] {
          const Tensor4 difference = xt::abs(scores_bhij() - p.attn_scores());  // (b, h, n, n)
          return Scalar(max_of(AnyTensor(difference)));  // NaN if a difference is (inf - inf), as .max() gives
        });
  t.add("masked", "Scores with the future masked", "The same causal mask for every head.",
        "mask_bool = self.mask.bool()[:num_tokens, :num_tokens]\nattn_scores.masked_fill_(mask_bool, -torch.inf)",
        {b, h, n, n}, p.masked)
      .show_heatmap(true);
  t.add("attn_weights", "Attention weights of every head",
        "Softmax over each row, scaled by sqrt(head_dim); every head has its own weights.",
        "attn_weights = torch.softmax(attn_scores / keys.shape[-1]**0.5, dim=-1)", {b, h, n, n},
        p.attn_weights)
      .show_heatmap(true);
  t.add("attn_weights_dropout", "After dropout", "Dropout on the weights (the same weights when p = 0).",
        "attn_weights = self.dropout(attn_weights)", {b, h, n, n}, p.attn_weights_dropout)
      .show_heatmap(true);
  t.add("context_vec_heads", "Each head's context vectors, back in token order",
        "Weights times values per head, then transpose(1, 2) back to " + shape_bnhd + ".",
        "context_vec = (attn_weights @ values).transpose(1, 2)", {b, n, h, hd}, p.context_heads);
  t.add("context_vec", "Heads combined",
        "contiguous().view concatenates the heads of each token into one d_out vector, as the wrapper's torch.cat "
        "did.",
        "context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)", {b, n, cfg.d_out},
        p.context_combined);
  t.add("context_vecs", "Context vectors after out_proj",
        "A final linear layer mixes what the heads found: (b, num_tokens, d_out).",
        "torch.manual_seed(" + std::to_string(seed) + ")\nmha = " + ctor +
            "\ncontext_vecs = mha(batch)  # context_vec = self.out_proj(context_vec)",
        {b, n, cfg.d_out}, p.context_vecs);
  if (in.model) add_next_token_steps(t, in, sel);
  t.resolve();
  return t;
}

Lesson mha_lesson() {
  return {mha_info(),
          {{{{Opt::Heads, ""},
             {Opt::DOut, "Output dimension of the whole module, split over the heads"},
             {Opt::Dropout, "Dropout probability on the attention weights"},
             {Opt::DropoutRng, ""},
             {Opt::Batch, ""},
             {Opt::Seed, seed_help("123")},
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
