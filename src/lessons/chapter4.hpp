#pragma once
// What chapter 4's lessons share: their mode (the book's own example tensors, no --input or --random, no
// --model layer) and the book's random example tensors drawn as PyTorch draws them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include <xtensor/xview.hpp>
#include "core/torch_random.hpp"
#include "lessons/lesson_text.hpp"
#include "lessons/registry.hpp"
#include "modules/gpt.hpp"

namespace attn {

// torch.randn(shape...) and torch.rand(shape...) from `gen`, as PyTorch 1.13 fills a new contiguous tensor.
AnyTensor randn(TorchGenerator& gen, const std::vector<std::size_t>& shape);
AnyTensor rand(TorchGenerator& gen, const std::vector<std::size_t>& shape);

// torch.linspace(start, end, steps) in float32 as PyTorch 1.13's CPU kernel computes it with its AVX2 vectors
// (the capability it uses on every x86-64 CPU unless ATEN_CPU_CAPABILITY says otherwise): 8 values at a time
// from a base, the first half counted up from start and the second down from end, the last few alone, each
// product and sum fused as the kernel's FMA build does.
AnyTensor linspace(float start, float end, std::size_t steps);  // (steps,)

// GPT_CONFIG_124M as the options' defaults: emb_dim 768, 12 heads, 12 layers, context_length 1024, drop_rate
// 0.1 (a lesson that takes only some of them still names the rest in its configuration).
LessonConfig gpt_config_124m();
// The model's configuration from the lesson's options, by GPT_CONFIG_124M's keys: --emb-dim, --heads,
// --layers, --context-length, --drop-rate (all three rates) and --qkv-bias.
GptConfig gpt_config(const LessonConfig& cfg);
// A configuration the book's classes can build: emb_dim divisible by n_heads (a UsageError naming the options),
// and no weight past the largest tensor attn makes (check_elements).
void check_model_shape(const GptConfig& cfg);
// The configuration's values for the lesson's text: {emb_dim}, {n_heads}, {n_layers}, {context_length},
// {vocab_size}, {drop_rate} (as Python writes the float) and {qkv_bias} (True or False).
LessonText& set_config_values(LessonText& text, const GptConfig& cfg);

// A batch of token ids, (b, num_tokens): each row one text's.
using Batch = std::vector<std::vector<std::int64_t>>;
// 4.1's batch: "Every effort moves you" and "Every day holds a" as GPT-2's tokenizer encodes them, stacked.
Batch book_batch();
// The batch as the (b, num_tokens) tensor of ids the book stacks (the lesson marks its step as integers).
AnyTensor batch_tensor(const Batch& batch);
// A UsageError unless the model's context_length holds the batch's `tokens`.
void check_context_length(const GptConfig& cfg, std::size_t tokens);
// A batch as Python writes the nested list: "[[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]]".
std::string batch_literal(const Batch& batch);

// torch.manual_seed(seed); model = Model(cfg) (GPTModel, DummyGPTModel): the model, and the generator as
// the forward's dropout masks then find it.
template <class Model>
struct SeededModel {
  Model model;
  TorchGenerator gen;
};
template <class Model>
SeededModel<Model> build_seeded(std::uint64_t seed, const GptConfig& cfg) {
  TorchGenerator gen(seed);
  Model model(cfg, gen);
  return {std::move(model), gen};
}
// model(batch) in training mode, as the book calls it: every intermediate kept, the dropout masks drawn in
// the forward's order from a copy of the generator (the node can be computed again).
template <class Model>
typename Model::Pass train_pass(const SeededModel<Model>& m, const Batch& batch, DropoutRng rng) {
  TorchGenerator gen = m.gen;
  return m.model.pass(batch, ForwardMode{&gen, rng});
}

// The steps a GPT model's forward starts with, from its pass (GPTModel::Pass, DummyGPTModel::Pass): "batch"
// (the ids), "tok_embeds", "pos_embeds", "x" (their sum) and "drop_emb".
template <class Pass>
void add_embedding_steps(const LessonText& text, const Node<Batch>& batch, const Node<Pass>& pass, std::size_t emb) {
  const std::size_t b = batch->size(), n = batch->front().size();
  text.add("batch", {b, n}, batch_tensor, batch).as_integer();  // (b, num_tokens)
  text.add("tok_embeds", {b, n, emb}, [](const Pass& p) { return p.tok_embeds; }, pass);  // (b, num_tokens, emb_dim)
  text.add("pos_embeds", {n, emb}, [](const Pass& p) {  // (num_tokens, emb_dim): pos_emb(torch.arange(n))
    return AnyTensor(xt::view(p.pos_embeds, 0));
  }, pass);
  text.add("x", {b, n, emb}, [](const Pass& p) { return p.x; }, pass);  // (b, num_tokens, emb_dim)
  text.add("drop_emb", {b, n, emb}, [](const Pass& p) { return p.x_dropped; }, pass);  // (b, num_tokens, emb_dim)
}

// A lesson of chapter 4 on the book's own example tensors: it takes no input (--input, --random, --text
// are refused) and no --model layer, and says why.
LessonMode chapter4_mode(std::vector<OptionUse> options, LessonConfig defaults, LessonMode::Run run);

}  // namespace attn
