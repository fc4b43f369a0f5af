#pragma once
// What every lesson starts from: the tokens and their embeddings, wherever they came from (the input
// sources of src/inputs make them), and for --text and --model the steps that made them. Plain data.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// A step of making the inputs themselves (--text: the token ids, the two embedding layers, their sum),
// shown before every lesson's own steps. Plain data: Trace (src/trace) makes Steps of them.
struct InputStep {
  std::string id, title, explanation, code;
  AnyTensor tensor;
  bool integer = false;  // an integer dtype in the book's code (token ids)
  std::optional<std::string> run;  // the notebook's form of `code` when it differs (Step::run)
};

struct ModelLayer;  // model/gpt2_model.hpp

struct Inputs {
  std::vector<std::string> tokens;  // one label per row; "x1".."xN" when the file names none
  Matrix embeddings;                // (num_tokens, d_in)
  std::string source;               // where they came from, as shown to the user
  std::vector<std::int64_t> token_ids;  // GPT-2's ids of the tokens (--text); empty otherwise
  std::vector<InputStep> steps;         // how the embeddings were made (--text, --model); empty otherwise
  // --model: the pretrained layer whose weights the lesson uses instead of drawing its own; null otherwise.
  std::shared_ptr<const ModelLayer> model;
  // Memory the inputs hold besides the tensors a lesson's plan counts (--model: the mapped weights, the
  // tokenizer, the forward's working memory), for the memory budget.
  std::size_t held_bytes = 0;

  std::size_t num_tokens() const { return embeddings.shape(0); }
  std::size_t d_in() const { return embeddings.shape(1); }
};

}  // namespace attn
