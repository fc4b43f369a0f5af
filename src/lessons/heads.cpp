// attn heads — every head of every layer at once: bertviz's model view, on the chapter's MultiHeadAttention
// (3.6.2). With --model it runs GPT-2 block by block and gives one step per layer, that layer's causal
// attention weights (heads, num_tokens, num_tokens), as Hugging Face's output_attentions=True returns them;
// without, the chapter's module on the lesson's input, one layer, the weights of `attn mha` for its first
// batch element. Under each head, a few words on what it mostly does, read from its weights (head_notes).
#include <cmath>
#include <cstdio>
#include <utility>

#include <xtensor/xview.hpp>

#include "core/terminal_text.hpp"
#include "lessons/lessons.hpp"
#include "model/gpt2_model.hpp"
#include "modules/attention.hpp"

namespace attn {

// A function, not a global: the registry may be asked for during static initialisation.
static LessonInfo heads_info() { return LessonText::info("heads", "3.6.2"); }

HeadNoteWords head_note_words(const Words& words) {
  const Content& c = words.content("heads");
  return {c.piece("phrases/note_previous", ""), c.piece("phrases/note_first", ""), c.piece("phrases/note_self", ""),
          c.piece("phrases/note_spread", "")};
}

std::vector<std::string> head_notes(const Tensor3& weights, const HeadNoteWords& words) {
  const std::size_t heads = weights.shape(0), n = weights.shape(1);
  std::vector<std::string> out;
  for (std::size_t h = 0; h < heads; ++h) {
    // Mean weight on the previous, the first and the query's own key, over rows 1 .. n-1 (row 0 only for a
    // one-token input, which has no previous key).
    const std::size_t from = n > 1 ? 1 : 0;
    double previous = 0, first = 0, self = 0;
    for (std::size_t i = from; i < n; ++i) {
      previous += i > 0 ? weights(h, i, i - 1) : 0.0f;
      first += weights(h, i, 0);
      self += weights(h, i, i);
    }
    const double rows = static_cast<double>(n - from);
    const std::pair<double, const std::string*> kinds[] = {
        {previous / rows, &words.previous}, {first / rows, &words.first}, {self / rows, &words.self}};
    std::pair<double, const std::string*> best{-1.0, nullptr};
    for (const auto& k : kinds)
      if (std::isfinite(k.first) && k.first > best.first) best = k;  // a NaN mean never wins: with none, the head spreads
    if (!(best.first >= kHeadNoteShare)) {
      out.push_back(words.spread);
      continue;
    }
    char share[16];
    std::snprintf(share, sizeof share, "%.2f", best.first);
    out.push_back(fill(*best.second, {{"share", share}}, "head note"));
  }
  return out;
}

namespace {

// A layer's weights as a step's value, with the words on each head.
WithHeadNotes<Tensor3> with_notes(Tensor3 weights, const HeadNoteWords& words) {
  std::vector<std::string> notes = head_notes(weights, words);
  return {std::move(weights), std::move(notes)};
}

// The causal attention weights of one layer on x (num_tokens, d_in), batch element 0 of the chapter's
// MultiHeadAttention.forward: (heads, num_tokens, num_tokens). The same calls as multi_head_attend.
Tensor3 layer_weights(const Linear& W_query, const Linear& W_key, const Matrix& x, std::size_t heads) {
  const std::size_t n = x.shape(0), head_dim = W_query.weight.shape(0) / heads;
  const Tensor3 batch = make_batch(x, 1);                                                // (1, n, d_in)
  const Tensor4 queries = split_heads(W_query.forward(batch), heads, head_dim);         // (1, h, n, hd)
  const Tensor4 keys = split_heads(W_key.forward(batch), heads, head_dim);              // (1, h, n, hd)
  const AnyTensor weights = head_weights(mask_future(head_scores(queries, keys)), head_dim);  // (1, h, n, n)
  return Tensor3(xt::reshape_view(weights, {heads, n, n}));                             // (h, n, n)
}

// --model: block `layer` of GPT-2 on x_block_<layer> (num_tokens, n_embd): its norm1, then its attention's
// weights, with the words on each head.
WithHeadNotes<Tensor3> model_layer_weights(const Inputs& in, const Matrix& x, std::size_t layer,
                                           const HeadNoteWords& words) {
  const Gpt2Model& model = *in.model->model;
  const Gpt2Attention att = model.attention(layer);  // (n_embd, n_embd) each, freed when the layer is done
  return with_notes(layer_weights(att.W_query, att.W_key, model.norm1(x, layer), model.config().n_head), words);
}

// x_block_<layer + 1> = model.trf_blocks[layer](x_block_<layer>): (num_tokens, n_embd).
Matrix next_block(const Inputs& in, const Matrix& x, std::size_t layer) { return in.model->model->block(x, layer); }

// --model: one step per layer, from --layer (whose input the model source made) to the last.
void add_model_layers(const LessonText& text, const Inputs& in, const HeadNoteWords& words) {
  Trace& t = text.trace();
  const Gpt2Config& c = in.model->model->config();
  const std::size_t n = in.num_tokens(), H = c.n_head, E = c.n_embd, first = in.model->layer;
  check_elements("the (heads, num_tokens, num_tokens) attention weights of a layer", {H, n, n});
  // What the lesson computes besides its steps: the inputs of every block it runs, kept as nodes, and one
  // layer's work at a time (its weights converted, the projections, scores, masked scores and weights).
  t.holds(saturating_product({c.n_layer - first + 1, n, E}));
  t.needs_temporarily(saturating_sum(saturating_product({12, E, E}),
                                     saturating_sum(saturating_product({4, H, n, n}), saturating_product({8, n, E}))));
  t.notes.push_back(text.with({{"first", std::to_string(first)}, {"last", std::to_string(c.n_layer - 1)}})
                        .phrase({"model_note", first + 1 == c.n_layer ? "block" : "blocks"}));
  const Node<Inputs> input = t.input();
  Node<Matrix> x = t.keep<Matrix>(in.model->block_input);  // (n, E): x_block_<first>
  for (std::size_t l = first; l < c.n_layer; ++l) {
    text.with({{"layer", std::to_string(l)}, {"next", std::to_string(l + 1)}})
        .add({"attn_weights_layer_{layer}", "model"}, {H, n, n}, model_layer_weights, input, x, l, words)
        .show_heatmap(true)
        .overview = true;
    if (l + 1 < c.n_layer) x = t.lazy<Matrix>(next_block, input, x, l);  // (n, E): x_block_<l + 1>
  }
}

// Without --model: the chapter's MultiHeadAttention as attn mha builds it (torch.manual_seed, then the
// module), one layer.
void add_module_layer(const LessonText& text, const Inputs& in, const LessonConfig& cfg, const HeadNoteWords& words) {
  Trace& t = text.trace();
  const std::size_t n = in.num_tokens(), h = cfg.heads;
  const std::uint64_t seed = cfg.seed.value_or(123);
  t.config["manual_seeds"] = {seed};
  TorchGenerator gen(seed);
  MultiHeadAttention mha(in.d_in(), cfg.d_out, 0.0, h, cfg.qkv_bias, gen);
  const std::string ctor = "MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=" + std::to_string(h) +
                           (cfg.qkv_bias ? ", qkv_bias=True" : "") + ")";
  t.modules.push_back({"mha", ctor, mha.num_parameters()});
  // The projections (b * n, d_out) each, the scores, masked scores and weights: kept by no node, one call.
  t.needs_temporarily(saturating_sum(saturating_product({4, h, n, n}), saturating_product({6, n, cfg.d_out})));
  const Node<MultiHeadAttention> module = t.keep(std::move(mha));
  text.with({{"layer", "0"}, {"seed", std::to_string(seed)}, {"ctor", ctor}})
      .add({"attn_weights_layer_{layer}", "module"}, {h, n, n},
           [](const MultiHeadAttention& mha, const Matrix& x, std::size_t h, const HeadNoteWords& words) {
             return with_notes(layer_weights(mha.W_query, mha.W_key, x, h), words);
           },
           module, t.embeddings(), h, words)
      .show_heatmap(true)
      .overview = true;
}

}  // namespace

ResolvedTrace run_heads(const Inputs& in, const LessonConfig& given, const Selection& sel) {
  Trace t(heads_info(), in, sel);
  if (in.model && given.seed)
    throw UsageError("attn heads --model draws no weights, so --seed does not apply: the model's weights are its own");
  const LessonConfig cfg = model_config(given, in, ModelUse::Layer, t);
  check_heads(cfg, false);
  check_elements("the (heads, num_tokens, num_tokens) attention weights", {cfg.heads, in.num_tokens(), in.num_tokens()});
  LessonText text(t, "heads");
  const std::size_t h = cfg.heads, hd = cfg.d_out / cfg.heads;
  static_assert(kHeadNoteShare == 0.5f, "the share the rule note states");
  text.set("h", h).set("hd", hd).set("share", "0.5").set("d_out", cfg.d_out);
  for (const auto& line : wrap_words(text.phrase("rule_note"), 80)) t.notes.push_back(line);
  const HeadNoteWords words = head_note_words(sel.words);
  if (in.model)
    add_model_layers(text, in, words);
  else
    add_module_layer(text, in, cfg, words);
  return t.resolve();
}

Lesson heads_lesson() {
  return {heads_info(),
                {{{{Opt::Heads, ""},
                   {Opt::DOut, option_help("heads", "d_out")},
                   {Opt::Seed, seed_help(option_help("heads", "seeds"))},
                   {Opt::QkvBias, ""}},
                  LessonConfig{},
                  run_heads}},
                // Runs that reach its largest allocations (tests/test_memory.cpp): measured against the
                // estimate, and the options of its largest --random Nx16 input under the budget.
                MemoryRuns{{{"--random", "512x64", "--d-out", "64", "--heads", "8"},
                            {"--random", "256x32", "--d-out", "32", "--heads", "4", "--json"}},
                           {"--d-out", "16", "--heads", "4"}}};
}

}  // namespace attn
