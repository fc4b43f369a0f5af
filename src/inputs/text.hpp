#pragma once
// --text: the student's own sentence as the lesson's inputs, as chapter 2 of the book makes them. GPT-2's
// tokenizer splits it (src/model/gpt2_tokenizer), then, after torch.manual_seed(seed), nn.Embedding(50257,
// d_in) embeds the tokens and nn.Embedding(context_length, d_in) their positions (context_length = the
// number of tokens), and the two are summed. The ids and both embeddings become the first steps of every
// lesson (Inputs::steps).
#include <cstdint>
#include <string>

#include "inputs/embeddings.hpp"
#include "inputs/source.hpp"

namespace attn {

inline constexpr std::uint64_t kBookEmbeddingSeed = 123;  // chapter 2's torch.manual_seed(123)
inline constexpr std::size_t kGpt2VocabularySize = 50257;
// What --model reads without --text: the book's six tokens as words.
inline constexpr const char* kBookSentence = "Your journey starts with one step";

// --text as an input source (with --model, the model's source takes the text instead).
InputSource text_source();

// A UsageError for text that is not UTF-8 or has no token, or more tokens than the limit.
// The steps' words are `words`' (data/lessons/inputs.json).
Inputs inputs_from_text(const std::string& text, std::size_t d_in, std::uint64_t seed, const Words& words = {});

class Gpt2Tokenizer;
// The text's tokens into `in` (tokens, token_ids). A UsageError for text that is not UTF-8 or has no token,
// or more than `max_tokens` (`limit` says which limit that is).
void tokenize_into(Inputs& in, const Gpt2Tokenizer& tokenizer, const std::string& text, std::size_t max_tokens,
                   const std::string& limit);
// The first input step, "token_ids", of `in`'s tokens of `text`: its notebook cell is inputs.json's `variant`
// of it ("text", "model"), whose other placeholders `values` gives (--model's directory).
InputStep token_ids_step(const Inputs& in, const std::string& text, const Words& words, const std::string& variant,
                         TextValues values = {});

}  // namespace attn
