// attn generate — 4.7 Generating text. generate_text_simple with the model of 4.6 (GPTModel built from the seed,
// then model.eval()): "Hello, I am" encoded, and for each new token the last position's logits, their softmax
// and its argmax appended to the context; then the ids decoded. The model is untrained, so the words are
// random, but every number is PyTorch's.
#include "core/cancel.hpp"
#include "core/limits.hpp"
#include "core/terminal_text.hpp"
#include "lessons/chapter4.hpp"
#include "lessons/lessons.hpp"
#include "model/gpt2_tokenizer.hpp"
#include "modules/gpt.hpp"

#include <algorithm>

namespace attn {

static LessonInfo generate_info() { return LessonText::info("generate", "4.7"); }

namespace {

constexpr const char* kStartContext = "Hello, I am";

// generate_text_simple(model, idx, max_new_tokens, context_size) in eval mode, every step kept.
struct Generation {
  std::vector<AnyTensor> logits;   // per new token: (1, vocab_size), the last position's
  std::vector<AnyTensor> probas;   // (1, vocab_size): torch.softmax(logits, dim=-1)
  std::vector<std::int64_t> next;  // torch.argmax(probas, dim=-1): the first largest
  std::vector<std::int64_t> out;   // the context and every new id
};

Generation generate_simple(const SeededModel<GPTModel>& m, const std::vector<std::int64_t>& encoded,
                           std::size_t max_new_tokens) {
  const GPTModel& model = m.model;
  const std::size_t vocab = model.cfg.vocab_size, context_size = model.cfg.context_length;
  Generation g;
  g.out = encoded;
  for (std::size_t step = 0; step < max_new_tokens; ++step) {
    check_cancelled();  // attn serve's time limit and stop, between new tokens (and between blocks inside)
    // idx[:, -context_size:]: the last context_size ids at most.
    const std::size_t from = g.out.size() > context_size ? g.out.size() - context_size : 0;
    const Batch idx_cond{{g.out.begin() + static_cast<std::ptrdiff_t>(from), g.out.end()}};
    const Tensor3 logits = model.forward(idx_cond, ForwardMode{});  // (1, n, vocab_size), eval mode
    Vector last = xt::empty<float>({vocab});                       // (vocab_size,): logits[:, -1, :]
    std::copy_n(&logits(0, logits.shape(1) - 1, 0), vocab, last.data());
    const Vector probas = softmax(last);  // (vocab_size,)
    const std::int64_t next = std::max_element(probas.begin(), probas.end()) - probas.begin();
    g.logits.push_back(AnyTensor(xt::reshape_view(last, {std::size_t{1}, vocab})));
    g.probas.push_back(AnyTensor(xt::reshape_view(probas, {std::size_t{1}, vocab})));
    g.next.push_back(next);
    g.out.push_back(next);
  }
  return g;
}

// A batch of one row of ids, as the book's unsqueeze(0) makes it: (1, n).
AnyTensor ids_row(const std::vector<std::int64_t>& ids) { return batch_tensor(Batch{ids}); }

// out, with its code, which ends with the text the ids decode to as a Python literal (the tokens' bytes are the
// vocabulary's: py_repr escapes what needs it). The text exists only once the ids are computed.
WithCode<AnyTensor> decoded_out(const Generation& g, const LessonText& text) {
  std::string decoded;
  for (const std::int64_t id : g.out) decoded += Gpt2Tokenizer::bundled().decode(id);
  LessonText::StepWords words = text.with({{"decoded_text", py_repr(decoded)}}).step("out");
  return {ids_row(g.out), std::move(words.code), std::move(words.run)};
}

}  // namespace

ResolvedTrace run_generate(const Inputs& in, const LessonConfig& cfg, const Selection& sel) {
  const GptConfig model = gpt_config(cfg);
  check_model_shape(model);
  std::vector<std::int64_t> encoded;
  for (const Gpt2Token& token : Gpt2Tokenizer::bundled().encode(kStartContext)) encoded.push_back(token.id);
  const std::size_t n = encoded.size(), new_tokens = cfg.max_new_tokens, vocab = model.vocab_size;
  const std::size_t context = std::min(n + new_tokens, model.context_length);
  Trace t(generate_info(), in, sel);
  t.show_inputs = false;
  t.gpt_classes = true;
  const std::uint64_t seed = cfg.seed.value_or(123);
  t.config["manual_seeds"] = {seed};
  LessonText text(t, "generate");
  set_config_values(text, model).set("seed", seed).set("max_new_tokens", new_tokens).set("n", n);
  const std::string one_row = batch_literal(Batch{encoded});  // "[[15496, 11, 314, 716]]"
  text.set("encoded", one_row.substr(1, one_row.size() - 2)).set("start_context", py_repr(kStartContext));
  // The model's weights, and what the generation keeps: two (1, vocab_size) rows a new token; one forward's
  // intermediates at a time besides (its logits and a block's pass, at the longest context).
  t.holds(saturating_sum(model.gpt_parameters(), saturating_product({2 * new_tokens + 1, vocab})));
  t.needs_temporarily(saturating_sum(saturating_sum(saturating_product({context, vocab}),
                                                    saturating_product({model.n_layers + 30, context, model.emb_dim})),
                                     saturating_product({4, model.n_heads, context, context})));

  const auto seeded = t.lazy<SeededModel<GPTModel>>(build_seeded<GPTModel>, seed, model);
  const Node<std::vector<std::int64_t>> encoded_node = t.keep(encoded);
  const auto generation = t.lazy<Generation>(generate_simple, seeded, encoded_node, new_tokens);
  text.add("encoded_tensor", {1, n}, ids_row, encoded_node).as_integer();  // (1, n)
  for (std::size_t k = 0; k < new_tokens; ++k) {
    const LessonText step = text.with({{"k", std::to_string(k + 1)}, {"length", std::to_string(std::min(n + k, model.context_length))},
                                       {"prev", k == 0 ? "encoded_tensor" : "idx_" + std::to_string(k)}});
    step.add({"logits_{k}"}, {1, vocab}, [](const Generation& g, std::size_t k) { return g.logits[k]; },
             generation, k);  // (1, vocab_size)
    step.add({"probas_{k}"}, {1, vocab}, [](const Generation& g, std::size_t k) { return g.probas[k]; },
             generation, k);  // (1, vocab_size)
    step.add({"idx_next_{k}"}, {1, 1}, [](const Generation& g, std::size_t k) {
      AnyTensor id = AnyTensor::from_shape({1, 1});  // (1, 1)
      id(0, 0) = static_cast<float>(g.next[k]);
      return id;
    }, generation, k).as_integer();
  }
  text.with({{"decoded_text", "..."}})
      .add("out", {1, n + new_tokens}, decoded_out, generation, text)
      .as_integer();  // (1, n + max_new_tokens)
  return t.resolve();
}

Lesson generate_lesson() {
  return {generate_info(),
          {chapter4_mode({{Opt::EmbDim, option_help("gpt", "emb_dim")},
                          {Opt::Heads, option_help("gpt", "heads")},
                          {Opt::Layers, option_help("gpt", "layers")},
                          {Opt::ContextLength, option_help("generate", "context_length")},
                          {Opt::QkvBias, ""},
                          {Opt::MaxNewTokens, option_help("generate", "max_new_tokens")},
                          {Opt::Seed, seed_help(option_help("gpt", "seed"))}},
                         gpt_config_124m(), run_generate)},
          // The default is GPT_CONFIG_124M itself: 163M parameters, about 650 MB.
          MemoryRuns{{{}, {"--emb-dim", "32", "--heads", "2", "--layers", "2", "--max-new-tokens", "40"}},
                     {"--emb-dim", "32", "--heads", "2", "--layers", "2", "--max-new-tokens", "40"}}};
}

}  // namespace attn
