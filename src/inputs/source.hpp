#pragma once
// An input source: one way of giving a lesson its inputs (the bundled six tokens, a file or standard
// input, random numbers, the student's sentence, a pretrained GPT-2), declared in its own file as an
// InputSource: the options it is asked with and their rules, its load() and its keys of the JSON config;
// listed once in inputs/sources.cpp. The command line makes the option table's entries from its options.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "document/inputs.hpp"
#include "text/words.hpp"

namespace attn {

struct PreloadedModel;  // inputs/model.hpp

struct InputOptions {
  std::string input;  // --input FILE; empty: the bundled journey.json
  std::optional<std::pair<std::size_t, std::size_t>> random;  // --random NxD
  std::optional<std::string> text;  // --text TEXT: GPT-2's tokens of it, embedded as chapter 2 does
  std::size_t d_in = 3;             // --d-in N, with --text: the embedding size (the book's toy: 3)
  std::size_t embedding_seed = 123; // --embedding-seed N, with --text: chapter 2's torch.manual_seed(123)
  std::string model;                // --model DIR: a Hugging Face GPT-2 directory; empty: none
  std::size_t layer = 0;            // --layer L, with --model: the block whose attention the lesson shows
  // attn serve --model: the model read once when the server starts, shared read-only by every request (`model`
  // names its directory, for the messages and the JSON config); null: a run reads --model's directory itself.
  std::shared_ptr<const PreloadedModel> preloaded;
};

// Refuses (a UsageError) a run whose memory need, in bytes, is past the budget.
using CheckMemory = std::function<void(std::size_t)>;

// A rule of a source's option beside another option, and the words of its message.
struct SourceRule {
  enum Kind {
    Exclusive,  // not with `other`: "A and OTHER exclude each other" + why
    NotWith,    // not with `other`: "A does not apply with OTHER" + why
    OnlyWith,   // not without `other`: "A only applies with OTHER (why)"
  } kind;
  std::string other;  // "--model"
  std::string why;
};

// An option a source is asked with, as plain data.
struct SourceOption {
  using Field = std::variant<std::string InputOptions::*,                // a name; "" is refused with `empty`
                             std::optional<std::string> InputOptions::*,  // text, unset unless given
                             std::size_t InputOptions::*,                 // a whole number, min to max
                             std::optional<std::pair<std::size_t, std::size_t>> InputOptions::*>;  // by `parse`
  SourceOption(std::string name_, std::string type_name_, std::string help_, Field field_, std::uint64_t min_ = 0,
               std::uint64_t max_ = 0)
      : name(std::move(name_)), type_name(std::move(type_name_)), help(std::move(help_)), field(field_), min(min_),
        max(max_) {}

  std::string name;       // "--random"
  std::string type_name;  // "NxD"
  std::string help;
  Field field;
  std::uint64_t min = 0, max = 0;
  std::string empty;
  // Reads `text` into `into`, or returns why it cannot (the whole message).
  std::string (*parse)(const std::string& text, InputOptions& into) = nullptr;
  std::string range;         // for the man page, when the type does not say it all
  std::string default_note;  // the default in words
  std::vector<SourceRule> rules;
};

struct InputSource {
  const char* name;                       // "random": what it is called in the code and the docs
  bool (*asked)(const InputOptions& opt);  // whether the options ask for it
  // Its inputs; `stdin_stream` is what --input - reads. `check_memory` is given the bytes a run would need
  // where the source knows them before its work (--model: before the tokenizer is read and the weights
  // mapped). The steps it makes, and where it says the inputs came from, are in `words`.
  Inputs (*load)(const InputOptions& opt, std::istream& stdin_stream, const CheckMemory& check_memory,
                 const Words& words);
  // What reproduces the inputs besides "input" (where they came from) in a lesson's JSON config; null: nothing.
  void (*config)(const InputOptions& opt, nlohmann::ordered_json& config);
  std::vector<SourceOption> options;  // in the order --help lists them
};

}  // namespace attn
