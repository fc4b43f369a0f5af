#include "inputs/model.hpp"

#include "core/cancel.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "inputs/input_text.hpp"
#include "inputs/text.hpp"

namespace attn {

namespace {

void check_layer(const std::string& dir, const Gpt2Config& c, std::size_t layer) {
  if (layer >= c.n_layer)
    throw UsageError("--layer " + std::to_string(layer) + " is past the last block of " + visible(dir) + ", which has " +
                     count_of(c.n_layer, "block") + ": --layer 0 to " + std::to_string(c.n_layer - 1));
}

void tokenize_for(Inputs& in, const Gpt2Tokenizer& tokenizer, const Gpt2Config& c, const std::string& text) {
  const bool context_limits = c.n_positions <= kMaxTokens;
  tokenize_into(in, tokenizer, text, context_limits ? c.n_positions : kMaxTokens,
                context_limits ? "the model's context length (n_positions)" : "the limit");
}

}  // namespace

std::shared_ptr<const PreloadedModel> preload_model(const std::string& dir,
                                                    const std::function<void(std::size_t)>& check_memory) {
  Gpt2Files files = Gpt2Files::inspect(dir);
  const std::size_t held = saturating_sum(files.tokenizer_bytes(), files.mapped_bytes());
  check_memory(saturating_sum(kBaseBytes, files.tokenizer_bytes()));
  Gpt2Tokenizer tokenizer = files.read_tokenizer();
  check_memory(saturating_sum(kBaseBytes, held));
  return std::make_shared<const PreloadedModel>(PreloadedModel{Gpt2Model::load(std::move(files), std::move(tokenizer)), held});
}

Inputs inputs_from_model(const std::string& dir, const std::string& text, std::size_t layer,
                         const std::function<void(std::size_t)>& check_memory,
                         const std::shared_ptr<const PreloadedModel>& preloaded, const Words& words) {
  Inputs in;
  std::shared_ptr<const Gpt2Model> model;
  if (preloaded) {  // read once by the server: only this run's forward counts
    model = preloaded->model;
    check_layer(dir, model->config(), layer);
    tokenize_for(in, model->tokenizer(), model->config(), text);
    in.held_bytes = Gpt2Files::activation_bytes(model->config(), in.token_ids.size(), layer);
    check_memory(saturating_sum(kBaseBytes, in.held_bytes));
  } else {
    // The memory budget is checked twice before the work: on the tokenizer's files before they are read,
    // then, with the number of tokens, on the whole forward before the weights are mapped.
    Gpt2Files files = Gpt2Files::inspect(dir);
    check_layer(dir, files.config, layer);
    check_memory(saturating_sum(kBaseBytes, files.tokenizer_bytes()));
    Gpt2Tokenizer tokenizer = files.read_tokenizer();
    tokenize_for(in, tokenizer, files.config, text);
    in.held_bytes = saturating_sum(files.tokenizer_bytes(), files.forward_bytes(in.token_ids.size(), layer));
    check_memory(saturating_sum(kBaseBytes, in.held_bytes));
    model = Gpt2Model::load(std::move(files), std::move(tokenizer));
  }
  const Gpt2Config& c = model->config();
  const std::size_t n = in.token_ids.size(), E = c.n_embd;
  const std::string L = std::to_string(layer), shape = "(" + std::to_string(n) + ", " + std::to_string(E) + ")";
  // The notebook (--format py, ipynb) loads the model from the same directory, before the tokens.
  in.steps.push_back(token_ids_step(in, text, words, "model", {{"dir", py_repr(dir)}}));
  const Matrix tok_embeds = model->token_embeddings(in.token_ids);  // (n, E)
  const Matrix pos_embeds = model->position_embeddings(n);          // (n, E)
  // Numbers as values: 50,257 with commas as English writes them, and as plain digits for a language whose
  // comma is its decimal point.
  const std::string E_ = std::to_string(E), hidden = std::to_string(4 * E);
  in.steps.push_back(input_step(words, "tok_embeds",
                                {{"vocab", with_commas(c.vocab_size)}, {"vocab_digits", std::to_string(c.vocab_size)},
                                 {"n_embd", E_}, {"shape", shape}},
                                AnyTensor(tok_embeds)));
  in.steps.push_back(input_step(words, "pos_embeds",
                                {{"last", std::to_string(n - 1)}, {"n_positions", with_commas(c.n_positions)},
                                 {"n_positions_digits", std::to_string(c.n_positions)}},
                                AnyTensor(pos_embeds)));
  Matrix x = tok_embeds + pos_embeds;  // (n, E)
  in.steps.push_back(input_step(words, "x_block_0", {}, AnyTensor(x)));
  for (std::size_t l = 0; l < layer; ++l) {
    check_cancelled();       // attn serve's time limit, between blocks
    x = model->block(x, l);  // (n, E)
    in.steps.push_back(input_step(words, "x_block_" + std::to_string(l + 1),
                                  {{"l", std::to_string(l)}, {"next", std::to_string(l + 1)}, {"n_embd", E_}, {"hidden", hidden}},
                                  AnyTensor(x), "x_block_{next}"));
  }
  in.embeddings = model->norm1(x, layer);  // (n, E)
  in.steps.push_back(input_step(words, "norm1_x", {{"layer", L}}, AnyTensor(in.embeddings)));
  describe_source(in, words, "source_model",
                  {{"dir", dir}, {"blocks", std::to_string(c.n_layer)}, {"heads", std::to_string(c.n_head)},
                   {"e", std::to_string(E)}, {"layer", L}});
  in.model = std::make_shared<ModelLayer>(ModelLayer{model, layer, model->attention(layer), std::move(x)});
  return in;
}

InputSource model_source() {
  const std::string embeds_text = " (--model embeds --text, or the book's sentence, itself)";
  SourceOption model{"--model", "DIR",
                     "A pretrained GPT-2 as Hugging Face ships it (config.json, model.safetensors, vocab.json, "
                     "merges.txt): --text (or the book's sentence) runs through its blocks up to --layer, and the lesson "
                     "uses that layer's real weights (docs/gpt2.md)",
                     &InputOptions::model};
  model.empty = "needs a directory (a Hugging Face GPT-2 download)";
  model.rules = {{SourceRule::Exclusive, "--random", embeds_text}, {SourceRule::Exclusive, "--input", embeds_text}};
  SourceOption layer{"--layer", "L", "With --model: the block whose attention the lesson shows, counted from 0",
                     &InputOptions::layer, 0, 1023};
  layer.rules = {{SourceRule::OnlyWith, "--model", "it picks a block or a head of a pretrained GPT-2"}};
  return {"model", [](const InputOptions& opt) { return !opt.model.empty(); },
          [](const InputOptions& opt, std::istream&, const CheckMemory& check_memory, const Words& words) {
            return inputs_from_model(opt.model, opt.text.value_or(kBookSentence), opt.layer, check_memory, opt.preloaded,
                                     words);
          },
          [](const InputOptions& opt, nlohmann::ordered_json& config) {
            config["model"] = opt.model;
            config["text"] = opt.text.value_or(kBookSentence);
            config["layer"] = opt.layer;
          },
          {model, layer}};
}

}  // namespace attn
