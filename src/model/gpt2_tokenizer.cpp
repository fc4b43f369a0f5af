#include "model/gpt2_tokenizer.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <queue>
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
  const std::string vocabulary = read_regular_file(vocabulary_path, kVocabularyFile);
  return parse(vocabulary, vocabulary_path, read_regular_file(merges_path, kMergesFile), merges_path);
}

Gpt2Tokenizer Gpt2Tokenizer::parse(const std::string& vocabulary, const std::string& vocabulary_path,
                                   const std::string& merges_bytes, const std::string& merges_path) {
  Gpt2Tokenizer t;
  // The vocabulary: {"token": id, ...}, every id a distinct integer from 0.
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
  for (const auto& [token, id] : t.id_of_)
    if (id != t.end_of_text_) t.longest_token_ = std::max(t.longest_token_, symbol_bytes(token).size());
  for (const std::string& symbol : gpt2_byte_symbols())
    if (t.id_of_.count(symbol) == 0)
      throw InputError(vocabulary_path + ": the tokenizer vocabulary lacks the byte token " + symbol);

  // The merges: "a b" per line in rank order, after "#version: 0.2".
  std::istringstream merges(merges_bytes);
  std::string line;
  std::size_t line_number = 0, merge_count = 0;
  while (std::getline(merges, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_number == 1 && line.rfind("#version", 0) == 0)) continue;
    const auto space = line.find(' ');
    if (space == 0 || space == std::string::npos || space + 1 == line.size() || line.find(' ', space + 1) != std::string::npos ||
        !valid_utf8(line))
      throw InputError(merges_path + ":" + std::to_string(line_number) +
                       ": expected a merge, two symbols separated by one space");
    // Both symbols and what they merge into must be tokens of the vocabulary: a merge that makes a symbol
    // the vocabulary lacks would otherwise surface as an unknown token when some text reaches it.
    const std::string first = line.substr(0, space), second = line.substr(space + 1);
    for (const std::string* symbol : {&first, &second})
      if (t.id_of_.count(*symbol) == 0)
        throw InputError(merges_path + ":" + std::to_string(line_number) + ": the merge's symbol \"" + visible(*symbol) +
                         "\" is not a token of " + vocabulary_path);
    if (t.id_of_.count(first + second) == 0)
      throw InputError(merges_path + ":" + std::to_string(line_number) + ": merges \"" + visible(first) + "\" and \"" +
                       visible(second) + "\" into \"" + visible(first + second) + "\", which " + vocabulary_path + " lacks");
    // Ranked by line, as encoder.py's dict(zip(bpe_merges, range(...))) ranks them: a repeated pair takes
    // its last line's rank.
    t.rank_of_[line] = merge_count++;
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

// encoder.py's bpe(): the adjacent pair of the lowest rank, every occurrence of it merged left to right,
// again until no pair has a rank. Written here with a heap of candidate pairs over a linked list of
// symbols, so a piece of n bytes costs O(n log n) instead of encoder.py's O(n^2) (a 120 KB word took over
// 30 s); each round still takes one rank's occurrences together, in order, as encoder.py's loop does, so
// the result is the same symbol for symbol (tests/test_gpt2_tokenizer.cpp holds it to a direct transcription).
std::vector<std::string> Gpt2Tokenizer::bpe(const std::string& piece) const {
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  struct Symbol {
    std::string text;
    std::size_t prev, next;  // neighbours in the list, kNone at the ends
    bool alive;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(piece.size());
  for (std::size_t i = 0; i < piece.size(); ++i)
    symbols.push_back({gpt2_byte_symbols()[static_cast<unsigned char>(piece[i])], i == 0 ? kNone : i - 1,
                       i + 1 < piece.size() ? i + 1 : kNone, true});
  struct Candidate {
    std::size_t rank, left;  // the pair's rank, and its left symbol's index (the order of positions)
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
  // The pair starting at `left`, if it still is one and has a rank; `rank` is that rank.
  const auto rank_at = [&](std::size_t left) {
    if (left == kNone || !symbols[left].alive || symbols[left].next == kNone) return kNone;
    const auto it = rank_of_.find(symbols[left].text + " " + symbols[symbols[left].next].text);
    return it == rank_of_.end() ? kNone : it->second;
  };
  const auto push = [&](std::size_t left) {
    const std::size_t rank = rank_at(left);
    if (rank != kNone) heap.push({rank, left});
  };
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i) push(i);
  std::vector<std::size_t> round, merged;
  while (!heap.empty()) {
    // Every candidate of the lowest rank, in position order; a stale one (its symbols changed) is dropped.
    const std::size_t rank = heap.top().rank;
    round.clear();
    while (!heap.empty() && heap.top().rank == rank) {
      round.push_back(heap.top().left);
      heap.pop();
    }
    merged.clear();
    for (const std::size_t left : round) {
      if (rank_at(left) != rank) continue;  // taken by the occurrence before it, or changed since
      Symbol& a = symbols[left];
      Symbol& b = symbols[a.next];
      a.text += b.text;
      b.alive = false;
      a.next = b.next;
      if (b.next != kNone) symbols[b.next].prev = left;
      merged.push_back(left);
    }
    for (const std::size_t left : merged) {  // the pairs the merged symbols now make with their neighbours
      push(symbols[left].prev);
      push(left);
    }
  }
  std::vector<std::string> out;
  for (std::size_t i = piece.empty() ? kNone : 0; i != kNone; i = symbols[i].next) out.push_back(std::move(symbols[i].text));
  return out;
}

Gpt2Tokenizer::Pieces Gpt2Tokenizer::pieces(const std::string& text) const {
  if (!valid_utf8(text)) throw UsageError("--text is not valid UTF-8");
  // The pieces (PCRE2's matching is linear here), and from their lengths the fewest tokens they can make:
  // no token stands for more than longest_token_ bytes.
  Pieces out;
  const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(pattern_->code, nullptr), &pcre2_match_data_free);
  if (!match) throw std::bad_alloc();
  const auto split = [&](std::size_t from, std::size_t to) {
    PCRE2_SIZE at = from;
    while (at < to) {
      const int rc = pcre2_match(pattern_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), to, at,
                                 PCRE2_NO_UTF_CHECK, match.get(), nullptr);  // checked above
      if (rc < 0) break;  // PCRE2_ERROR_NOMATCH: nothing more (every character matches some branch)
      const PCRE2_SIZE* span = pcre2_get_ovector_pointer(match.get());
      if (span[1] > span[0]) {
        out.spans.push_back({span[0], span[1]});
        out.fewest += (span[1] - span[0] + longest_token_ - 1) / longest_token_;
      }
      at = span[1] > at ? span[1] : at + 1;
    }
  };
  const std::size_t eot_size = std::string(kEndOfText).size();
  std::size_t from = 0;
  for (std::size_t eot = text.find(kEndOfText); eot != std::string::npos; eot = text.find(kEndOfText, from)) {
    split(from, eot);
    out.spans.push_back({eot, eot});  // the special token
    ++out.fewest;
    from = eot + eot_size;
  }
  split(from, text.size());
  return out;
}

std::size_t Gpt2Tokenizer::fewest_tokens(const std::string& text) const { return pieces(text).fewest; }

std::optional<std::vector<Gpt2Token>> Gpt2Tokenizer::encode(const std::string& text, std::size_t max_tokens) const {
  // A text whose pieces alone make more tokens than the limit is refused before any merge; otherwise the
  // merging stops at the first piece that takes the count past it.
  const Pieces all = pieces(text);
  if (all.fewest > max_tokens) return std::nullopt;
  std::vector<Gpt2Token> out;
  for (const auto& [from, to] : all.spans) {
    if (from == to) {
      out.push_back({end_of_text_, kEndOfText});
    } else {
      for (const std::string& symbol : bpe(text.substr(from, to - from))) {
        const auto id = id_of_.find(symbol);  // every merge's result is a token (checked when loaded)
        if (id == id_of_.end()) throw std::logic_error("BPE made a symbol the vocabulary lacks");
        out.push_back({id->second, symbol_bytes(symbol)});
      }
    }
    if (out.size() > max_tokens) return std::nullopt;
  }
  return out;
}

std::vector<Gpt2Token> Gpt2Tokenizer::encode(const std::string& text) const {
  return *encode(text, std::numeric_limits<std::size_t>::max());
}

}  // namespace attn
