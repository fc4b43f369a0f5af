#include "io/gpt2_tokenizer.hpp"

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <utf8proc.h>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/terminal_text.hpp"
#include "io/files.hpp"
#include "io/paths.hpp"

namespace attn {

namespace {

constexpr const char* kEndOfText = "<|endoftext|>";

std::string utf8_of(std::int32_t codepoint) {
  utf8proc_uint8_t buf[4];
  const auto n = utf8proc_encode_char(codepoint, buf);
  return std::string(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
}

// GPT-2's pre-tokenizer pattern, as OpenAI's encoder.py writes it for Python's `regex` module:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// `regex`'s \s is Unicode's White_Space property. PCRE2's \s under PCRE2_UCP is "Z or tab, NL, VT, FF, CR",
// which leaves out U+0085 (NEXT LINE, a control character that is White_Space), so the class is spelled out
// here: the 25 White_Space characters.
const char* const kWhiteSpace =
    "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

std::string pretokenizer_pattern() {
  const std::string ws = kWhiteSpace;
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" + ws + "\\p{L}\\p{N}]+|[" + ws + "]+(?![^" + ws +
         "])|[" + ws + "]+";
}

// A byte-encoded token's bytes: the inverse of gpt2_byte_symbols, each of its characters one byte. A
// character that is no byte's symbol (a vocabulary file's own token) is kept as it is.
std::string symbol_bytes(const std::string& symbol) {
  static const std::unordered_map<std::string, char> byte_of = [] {
    std::unordered_map<std::string, char> m;
    for (int b = 0; b < 256; ++b) m.emplace(gpt2_byte_symbols()[b], static_cast<char>(b));
    return m;
  }();
  std::string bytes;
  for (std::size_t i = 0; i < symbol.size();) {
    const unsigned char lead = static_cast<unsigned char>(symbol[i]);
    const std::size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;  // valid UTF-8 (checked)
    const std::string ch = symbol.substr(i, len);
    const auto it = byte_of.find(ch);
    bytes += it != byte_of.end() ? std::string(1, it->second) : ch;
    i += len;
  }
  return bytes;
}

}  // namespace

std::string Gpt2Tokenizer::decode(std::int64_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= token_of_.size()) throw std::out_of_range("token id past the vocabulary");
  return id == end_of_text_ ? std::string(kEndOfText) : symbol_bytes(token_of_[static_cast<std::size_t>(id)]);
}

struct Gpt2Tokenizer::Pattern {
  pcre2_code* code = nullptr;
  ~Pattern() { pcre2_code_free(code); }
};

Gpt2Tokenizer::Gpt2Tokenizer() = default;
Gpt2Tokenizer::Gpt2Tokenizer(Gpt2Tokenizer&&) noexcept = default;
Gpt2Tokenizer::~Gpt2Tokenizer() = default;

const std::vector<std::string>& gpt2_byte_symbols() {
  // encoder.py's bytes_to_unicode: the bytes that print as themselves ('!'..'~', U+00A1..U+00AC,
  // U+00AE..U+00FF) keep their code point; the other 68 (controls, space, U+00A0, U+00AD) take U+0100 on,
  // in byte order.
  static const std::vector<std::string> symbols = [] {
    std::vector<std::string> out(256);
    const auto prints = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
    int next = 256;
    for (int b = 0; b < 256; ++b) out[b] = utf8_of(prints(b) ? b : next++);
    return out;
  }();
  return symbols;
}

Gpt2Tokenizer Gpt2Tokenizer::load(const std::string& vocabulary_path, const std::string& merges_path) {
  Gpt2Tokenizer t;
  // The vocabulary: {"token": id, ...}, every id a distinct integer from 0.
  const std::string vocabulary = read_regular_file(vocabulary_path, kVocabularyFile);
  if (!valid_utf8(vocabulary)) throw InputError(vocabulary_path + ": the tokenizer vocabulary is not UTF-8");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(vocabulary);
  } catch (const nlohmann::json::exception&) {  // parse_error, or out_of_range.406 for a number like 1e999
    throw InputError(vocabulary_path + ": the tokenizer vocabulary is not valid JSON");
  }
  if (!doc.is_object() || doc.empty())
    throw InputError(vocabulary_path + ": the tokenizer vocabulary is not a JSON object of token ids");
  std::vector<bool> seen(doc.size(), false);
  for (const auto& [token, id] : doc.items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= static_cast<std::int64_t>(doc.size()) ||
        seen[id.get<std::size_t>()])
      throw InputError(vocabulary_path + ": the id of token " + visible(token) + " is not a new whole number below " +
                       std::to_string(doc.size()));
    seen[id.get<std::size_t>()] = true;
    t.id_of_.emplace(token, id.get<std::int64_t>());
  }
  t.token_of_.resize(doc.size());
  for (const auto& [token, id] : t.id_of_) t.token_of_[static_cast<std::size_t>(id)] = token;
  const auto eot = t.id_of_.find(kEndOfText);
  if (eot == t.id_of_.end()) throw InputError(vocabulary_path + ": the tokenizer vocabulary has no <|endoftext|>");
  t.end_of_text_ = eot->second;
  for (const std::string& symbol : gpt2_byte_symbols())
    if (t.id_of_.count(symbol) == 0)
      throw InputError(vocabulary_path + ": the tokenizer vocabulary lacks the byte token " + symbol);

  // The merges: "a b" per line in rank order, after "#version: 0.2".
  std::istringstream merges(read_regular_file(merges_path, kMergesFile));
  std::string line;
  std::size_t line_number = 0;
  while (std::getline(merges, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_number == 1 && line.rfind("#version", 0) == 0)) continue;
    const auto space = line.find(' ');
    if (space == 0 || space == std::string::npos || space + 1 == line.size() || line.find(' ', space + 1) != std::string::npos ||
        !valid_utf8(line))
      throw InputError(merges_path + ":" + std::to_string(line_number) +
                       ": expected a merge, two symbols separated by one space");
    t.rank_of_.emplace(line, t.rank_of_.size());  // a repeated pair keeps its first (lowest) rank
  }
  if (t.rank_of_.empty()) throw InputError(merges_path + ": the tokenizer merges file has no merges");

  t.pattern_ = std::make_unique<Pattern>();
  int error = 0;
  PCRE2_SIZE offset = 0;
  const std::string pattern = pretokenizer_pattern();
  t.pattern_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (t.pattern_->code == nullptr) throw std::logic_error("GPT-2's pre-tokenizer pattern does not compile");
  return t;
}

const Gpt2Tokenizer& Gpt2Tokenizer::bundled() {
  static const Gpt2Tokenizer tokenizer = [] {
    const std::string vocabulary = find_data_file("gpt2/encoder.json"), merges = find_data_file("gpt2/vocab.bpe");
    if (vocabulary.empty() || merges.empty())
      throw InputError("cannot find GPT-2's tokenizer files gpt2/encoder.json and gpt2/vocab.bpe (looked in " +
                       data_dirs_text() + ")");
    return load(vocabulary, merges);
  }();
  return tokenizer;
}

std::vector<std::string> Gpt2Tokenizer::bpe(const std::string& piece) const {
  std::vector<std::string> symbols;
  for (const unsigned char byte : piece) symbols.push_back(gpt2_byte_symbols()[byte]);
  while (symbols.size() > 1) {
    // The adjacent pair of the lowest rank, then every occurrence of it merged, left to right.
    std::size_t best = std::numeric_limits<std::size_t>::max();
    std::string first, second;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = rank_of_.find(symbols[i] + " " + symbols[i + 1]);
      if (it != rank_of_.end() && it->second < best) {
        best = it->second;
        first = symbols[i];
        second = symbols[i + 1];
      }
    }
    if (best == std::numeric_limits<std::size_t>::max()) break;
    std::vector<std::string> merged;
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && symbols[i] == first && symbols[i + 1] == second) {
        merged.push_back(first + second);
        ++i;
      } else {
        merged.push_back(symbols[i]);
      }
    }
    symbols = std::move(merged);
  }
  return symbols;
}

std::vector<Gpt2Token> Gpt2Tokenizer::encode(const std::string& text) const {
  if (!valid_utf8(text)) throw UsageError("--text is not valid UTF-8");
  std::vector<Gpt2Token> out;
  const auto encode_part = [&](const std::string& part) {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(pattern_->code, nullptr);
    PCRE2_SIZE at = 0;
    while (at < part.size()) {
      const int rc = pcre2_match(pattern_->code, reinterpret_cast<PCRE2_SPTR>(part.data()), part.size(), at,
                                 PCRE2_NO_UTF_CHECK, match, nullptr);  // checked above
      if (rc < 0) break;  // PCRE2_ERROR_NOMATCH: nothing more (every character matches some branch)
      const PCRE2_SIZE* span = pcre2_get_ovector_pointer(match);
      for (const std::string& symbol : bpe(part.substr(span[0], span[1] - span[0]))) {
        const auto id = id_of_.find(symbol);
        if (id == id_of_.end()) throw InputError("the tokenizer vocabulary has no token " + visible(symbol));
        out.push_back({id->second, symbol_bytes(symbol)});
      }
      at = span[1] > at ? span[1] : at + 1;
    }
    pcre2_match_data_free(match);
  };
  std::size_t from = 0;
  for (std::size_t eot = text.find(kEndOfText); eot != std::string::npos; eot = text.find(kEndOfText, from)) {
    encode_part(text.substr(from, eot - from));
    out.push_back({end_of_text_, kEndOfText});
    from = eot + std::string(kEndOfText).size();
  }
  encode_part(text.substr(from));
  return out;
}

std::string gpt2_readable(const std::string& bytes) {
  std::string out;
  std::size_t i = 0;
  while (i < bytes.size()) {
    utf8proc_int32_t cp = 0;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(bytes.data() + i),
                                    static_cast<utf8proc_ssize_t>(bytes.size() - i), &cp);
    if (n > 0) {
      out += bytes.substr(i, static_cast<std::size_t>(n));
      i += static_cast<std::size_t>(n);
    } else {  // part of a character split across tokens
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(bytes[i]));
      out += hex;
      ++i;
    }
  }
  return out;
}

}  // namespace attn
