// libFuzzer target: any bytes as a model directory's tokenizer files and a text (what --model reads from
// vocab.json and merges.txt, then --text): the input is split at its first two NUL bytes into the
// vocabulary, the merges and the text. The files either load, or throw one InputError line naming one of
// them (output_checks.hpp: no control byte reaches a terminal). A tokenizer that loads encodes the text
// (when it is UTF-8) into tokens whose bytes give the text back, each one a token of the vocabulary; a
// limit of a few tokens is either met or refused, never passed. Built by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "core/terminal_text.hpp"
#include "model/gpt2_tokenizer.hpp"
#include "output_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using attn_fuzz::check;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const auto first = bytes.find('\0');
  const auto second = first == std::string::npos ? std::string::npos : bytes.find('\0', first + 1);
  const std::string vocabulary = bytes.substr(0, first);
  const std::string merges = first == std::string::npos ? "" : bytes.substr(first + 1, second - first - 1);
  const std::string text = second == std::string::npos ? "hello there" : bytes.substr(second + 1);
  try {
    const attn::Gpt2Tokenizer t = attn::Gpt2Tokenizer::parse(vocabulary, "m/vocab.json", merges, "m/merges.txt");
    if (!attn::valid_utf8(text)) return 0;
    const auto all = t.encode(text, SIZE_MAX);
    check(all.has_value());
    std::string back;
    for (const attn::Gpt2Token& token : *all) {
      check(token.id >= 0 && static_cast<std::size_t>(token.id) < t.vocabulary_size());
      check(t.decode(token.id) == token.bytes);
      back += token.bytes;
    }
    check(back == text);
    for (const std::size_t limit : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
      const auto some = t.encode(text, limit);
      check(some.has_value() == (all->size() <= limit));
    }
  } catch (const attn::InputError& e) {
    const std::string message = e.what();
    check(message.rfind("m/vocab.json", 0) == 0 || message.rfind("m/merges.txt", 0) == 0);
    check(message.find('\n') == std::string::npos);
    attn_fuzz::check_terminal_safe(message, false);
  }
  return 0;
}
