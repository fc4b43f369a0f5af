#pragma once
// --model DIR as an input source: GPT-2's forward up to block L's norm1 (src/model/gpt2_model), its steps
// shown before the lesson's own, and the layer's real weights for the lesson (Inputs::model).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "model/gpt2_model.hpp"
#include "inputs/source.hpp"
#include "document/inputs.hpp"

namespace attn {

// --model DIR with --text TEXT (the book's sentence without it): the tokens, then the forward to block
// `layer`'s norm1, as steps, and the result as the lesson's inputs. UsageErrors give the model's own range
// for --layer, and its context length for the text.
// `check_memory` is called with the bytes the run needs before the tokenizer's files are read, and again
// before the weights are mapped; it refuses (a UsageError) a need past the budget. Inputs::held_bytes says
// what the model holds while the lesson runs.
// With `preloaded`, its model is used and `dir` is not read again; the memory checked is then only the run's own.
Inputs inputs_from_model(const std::string& dir, const std::string& text, std::size_t layer,
                         const std::function<void(std::size_t)>& check_memory,
                         const std::shared_ptr<const PreloadedModel>& preloaded = nullptr, const Words& words = {});

// A model read once and shared, read-only, by the runs of a process (attn serve --model): its weights mapped
// and its tokenizer read. `held_bytes` is what it holds for as long as it lives.
struct PreloadedModel {
  std::shared_ptr<const Gpt2Model> model;
  std::size_t held_bytes = 0;
};
// Reads `dir` as inputs_from_model does (the same errors), `check_memory` called with what it will hold
// before the tokenizer is read and before the weights are mapped.
std::shared_ptr<const PreloadedModel> preload_model(const std::string& dir, const std::function<void(std::size_t)>& check_memory);

// --model DIR as an input source: its text is --text's, or the book's sentence.
InputSource model_source();

}  // namespace attn
