#pragma once
// What every lesson starts from: the tokens and their embeddings, wherever they came from (the input
// sources of src/inputs make them), and for --text and --model the steps that made them. Plain data.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// A step of making the inputs themselves (--text: the token ids, the two embedding layers, their sum),
// shown before every lesson's own steps. Plain data: Trace (src/trace) makes Steps of them. Its words are
// content, data/lessons/inputs.json, which the source that makes it fills in the run's words with the values
// it knows (inputs/input_text.hpp).
struct InputStep {
  std::string id;
  std::string title, explanation;
  std::string code;
  AnyTensor tensor;
  bool integer = false;  // an integer dtype in the book's code (token ids)
  std::optional<std::string> run;  // the notebook's form of `code` when it differs (Step::run)
  std::string show;                // what the notebook prints (Step::show; "": the id)
};

struct ModelLayer;  // model/gpt2_model.hpp

struct Inputs {
  std::vector<std::string> tokens;  // one label per row; "x1".."xN" when the file names none
  Matrix embeddings;                // (num_tokens, d_in)
  // Where they came from: a file's name, or in words (--text, --random, --model: inputs.json's phrase) in
  // English, as the JSON config's "input" says it; and those words in the run's language ("": a file's name).
  std::string source;
  std::string source_words;
  std::vector<std::int64_t> token_ids;  // GPT-2's ids of the tokens (--text); empty otherwise
  std::vector<InputStep> steps;         // how the embeddings were made (--text, --model); empty otherwise
  // --model: the pretrained layer whose weights the lesson uses instead of drawing its own; null otherwise.
  std::shared_ptr<const ModelLayer> model;
  // Memory the inputs hold besides the tensors a lesson's plan counts (--model: the mapped weights, the
  // tokenizer, the forward's working memory), for the memory budget.
  std::size_t held_bytes = 0;

  // Where they came from, as the run's words say it: what the renderers show.
  const std::string& shown_source() const { return source_words.empty() ? source : source_words; }
  std::size_t num_tokens() const { return embeddings.shape(0); }
  std::size_t d_in() const { return embeddings.shape(1); }
};

}  // namespace attn
