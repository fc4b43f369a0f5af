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
// content, data/lessons/inputs.json, in the run's language: the input sources (src/inputs, below the
// lessons) give only the piece's name and the values of its placeholders, and the lesson's text
// (LessonText, src/lessons/lesson_text.hpp) fills in the step's title and explanation.
struct InputStep {
  std::string id;
  std::string text;  // the step's piece in data/lessons/inputs.json ("x_block_{next}"); "": the id
  std::map<std::string, std::string> values;   // its placeholders' values ({n}, {listed}, ...)
  // Placeholders whose value is a phrase of data/lessons/inputs.json, itself filled from `values` (a
  // clause only some inputs need); a placeholder in neither map is a missing value.
  std::map<std::string, std::string> phrases;
  std::string code;
  AnyTensor tensor;
  bool integer = false;  // an integer dtype in the book's code (token ids)
  std::optional<std::string> run;  // the notebook's form of `code` when it differs (Step::run)
  std::string show;                // what the notebook prints (Step::show; "": the id)
};

// An input step with the values of its words, its code and its value; the rest set after.
inline InputStep input_step(std::string id, std::map<std::string, std::string> values, std::string code, AnyTensor tensor) {
  InputStep s;
  s.id = std::move(id);
  s.values = std::move(values);
  s.code = std::move(code);
  s.tensor = std::move(tensor);
  return s;
}

struct ModelLayer;  // model/gpt2_model.hpp

struct Inputs {
  std::vector<std::string> tokens;  // one label per row; "x1".."xN" when the file names none
  Matrix embeddings;                // (num_tokens, d_in)
  std::string source;               // where they came from, as shown to the user
  // When `source` is words (--text, --random, --model), the phrase of data/lessons/inputs.json that says it
  // and its values: the lesson's text writes `source` again in the trace's language. "": `source` is a file's name.
  std::string source_phrase;
  std::map<std::string, std::string> source_values;
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
