#pragma once
// An input source: one way of giving a lesson its inputs (the bundled six tokens, a file or standard
// input, random numbers, the student's sentence, a pretrained GPT-2), declared in its own file as an
// InputSource, and listed once in inputs/sources.cpp. Its options and their rules are the option table's
// (cli/options.cpp), bound to the fields of InputOptions.
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

// Refuses (a UsageError) a run whose memory need, in bytes, is past the budget.
using CheckMemory = std::function<void(std::size_t)>;

struct InputSource {
  const char* name;                       // "random": what it is called in the code and the docs
  bool (*asked)(const InputOptions& opt);  // whether the options ask for it
  // Its inputs; `stdin_stream` is what --input - reads. `check_memory` is given the bytes a run would need
  // where the source knows them before its work (--model: before the tokenizer is read and the weights
  // mapped).
  Inputs (*load)(const InputOptions& opt, std::istream& stdin_stream, const CheckMemory& check_memory);
  // What reproduces the inputs besides "input" (where they came from) in a lesson's JSON config; null: nothing.
  void (*config)(const InputOptions& opt, nlohmann::ordered_json& config);
};

}  // namespace attn
