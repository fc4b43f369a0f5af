#pragma once
// GPT-2's byte-level BPE tokenizer, as chapter 2 of the book uses it (tiktoken's "gpt2" encoding, from
// OpenAI's encoder.json and vocab.bpe; Hugging Face ships the same files as vocab.json and merges.txt):
//   1. the special token <|endoftext|> is split off and becomes id 50256;
//   2. the rest is cut into pieces by GPT-2's pre-tokenizer pattern (contractions, runs of letters or of
//      digits with an optional leading space, other symbols, whitespace), matched with PCRE2;
//   3. each piece's UTF-8 bytes become printable characters (byte 0x20, a space, is "Ġ"), and the merges
//      are applied by rank, lowest first, until none applies; each resulting symbol is one token.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/files.hpp"

namespace attn {

struct Gpt2Token {
  std::int64_t id;
  std::string bytes;  // the token's text, as the UTF-8 bytes it stands for (" journey"; may be part of a character)
};

// The caps on the two files (io/files): GPT-2's are 1.0 MiB and 0.5 MiB; a vocabulary of config.json's
// largest vocab_size fits with room.
inline constexpr FileKind kVocabularyFile{"the tokenizer vocabulary", std::size_t{16} << 20};
inline constexpr FileKind kMergesFile{"the tokenizer merges", std::size_t{16} << 20};

class Gpt2Tokenizer {
 public:
  // Reads the vocabulary (a JSON object token -> id) and the merges (one "a b" pair per line, in rank order,
  // after an optional "#version" line). An InputError names the file and what is wrong.
  static Gpt2Tokenizer load(const std::string& vocabulary_path, const std::string& merges_path);
  // The same checks on the two files' bytes (the fuzz target, tests); the paths label the messages.
  static Gpt2Tokenizer parse(const std::string& vocabulary, const std::string& vocabulary_path, const std::string& merges,
                             const std::string& merges_path);
  // The files bundled with attn: data/gpt2/encoder.json and data/gpt2/vocab.bpe, found as journey.json is.
  static const Gpt2Tokenizer& bundled();

  // The tokens of `text`, which must be valid UTF-8 (a UsageError otherwise). "<|endoftext|>" is the
  // special token 50256 wherever it appears.
  std::vector<Gpt2Token> encode(const std::string& text) const;
  // The same, or none when the text makes more than `max_tokens` tokens. A text whose pieces alone show it
  // (fewest_tokens: a piece of n bytes makes at least n / the longest token's bytes, 128 for GPT-2) is
  // refused before any merge, in time linear in its length: a text of more words than the limit. Otherwise
  // the merges (O(n log n) in a piece's length) stop at the first piece past the limit.
  std::optional<std::vector<Gpt2Token>> encode(const std::string& text, std::size_t max_tokens) const;
  // The fewest tokens `text` can make, from its pieces alone (no merge).
  std::size_t fewest_tokens(const std::string& text) const;
  std::size_t vocabulary_size() const { return id_of_.size(); }
  // Token `id`'s text as the UTF-8 bytes it stands for (" journey"); std::out_of_range past the vocabulary.
  std::string decode(std::int64_t id) const;

  Gpt2Tokenizer(Gpt2Tokenizer&&) noexcept;
  ~Gpt2Tokenizer();

 private:
  Gpt2Tokenizer();
  std::vector<std::string> bpe(const std::string& piece) const;  // byte-encoded symbols after the merges
  struct Pieces {
    std::vector<std::pair<std::size_t, std::size_t>> spans;  // [from, to) of the text; from == to: <|endoftext|>
    std::size_t fewest = 0;                                   // the fewest tokens they can make
  };
  Pieces pieces(const std::string& text) const;  // the pre-tokenizer's pieces (a UsageError if not UTF-8)

  std::unordered_map<std::string, std::int64_t> id_of_;  // byte-encoded token -> id
  std::vector<std::string> token_of_;                     // id -> byte-encoded token
  std::unordered_map<std::string, std::size_t> rank_of_;  // "a b" -> merge rank
  std::int64_t end_of_text_ = -1;
  std::size_t longest_token_ = 1;  // the most bytes any token but <|endoftext|> stands for
  struct Pattern;
  std::unique_ptr<Pattern> pattern_;  // the compiled pre-tokenizer pattern
};

// The byte-level encoding: each of the 256 bytes as the one printable character GPT-2 writes for it
// (bytes that print as themselves stay, the others map to U+0100 and up: 0x20 is "Ġ", U+0120).
const std::vector<std::string>& gpt2_byte_symbols();

}  // namespace attn
