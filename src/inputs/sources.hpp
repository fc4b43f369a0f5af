#pragma once
// Where a lesson's inputs come from, as the options say it: the bundled six tokens, a file or standard
// input (--input), random numbers (--random), the student's sentence (--text) or a pretrained GPT-2 (--model).
#include <cstddef>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "trace/inputs.hpp"

namespace attn {

struct InputOptions {
  std::string input;  // --input FILE; empty: the bundled journey.json
  std::optional<std::pair<std::size_t, std::size_t>> random;  // --random NxD
  std::optional<std::string> text;  // --text TEXT: GPT-2's tokens of it, embedded as chapter 2 does
  std::size_t d_in = 3;             // --d-in N, with --text: the embedding size (the book's toy: 3)
  std::size_t embedding_seed = 123; // --embedding-seed N, with --text: chapter 2's torch.manual_seed(123)
  std::string model;                // --model DIR: a Hugging Face GPT-2 directory; empty: none
  std::size_t layer = 0;            // --layer L, with --model: the block whose attention the lesson shows
};

// The inputs `opt` asks for: --model (with --text or the book's sentence), else --text, --random, --input,
// and the bundled six tokens when none is given. The option table (cli/options.cpp) refuses two sources at
// once before this is called. `stdin_stream` is what --input - reads. `check_memory` is given the bytes a
// run would need where a source knows them before its work (--model: before it reads the tokenizer and
// before it maps the weights) and refuses, with a UsageError, a need past the budget.
Inputs load_inputs(const InputOptions& opt, std::istream& stdin_stream,
                   const std::function<void(std::size_t)>& check_memory);

// What reproduces the inputs, as a lesson's JSON config begins: "input" (where they came from), then for
// --model its directory, text and layer, for --text its text, d_in and seed.
nlohmann::ordered_json inputs_config(const InputOptions& opt, const Inputs& in);

}  // namespace attn
