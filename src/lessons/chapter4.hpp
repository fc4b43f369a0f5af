#pragma once
// What chapter 4's lessons share: their mode (the book's own example tensors, no --input or --random, no
// --model layer) and the book's random example tensors drawn as PyTorch draws them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"
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
// A batch as Python writes the nested list: "[[6109, 3626, 6100, 345], [6109, 1110, 6622, 257]]".
std::string batch_literal(const Batch& batch);

// A lesson of chapter 4 on the book's own example tensors: it takes no input (--input, --random, --text
// are refused) and no --model layer, and says why.
LessonMode chapter4_mode(std::vector<OptionUse> options, LessonConfig defaults, LessonMode::Run run);

}  // namespace attn
