// GPT-2's tokenizer against the book's ids and a reference BPE in Python (tests/golden/gpt2_tokens.py,
// with the `regex` module GPT-2's own encoder.py used): the same ids for 401 strings of Unicode, emoji,
// digits, contractions, runs of spaces, newlines and <|endoftext|>.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/terminal_text.hpp"
#include "model/gpt2_tokenizer.hpp"
#include "support.hpp"

using attn::Gpt2Tokenizer;

namespace {

std::vector<std::int64_t> ids_of(const std::string& text) {
  std::vector<std::int64_t> ids;
  for (const auto& t : Gpt2Tokenizer::bundled().encode(text)) ids.push_back(t.id);
  return ids;
}

}  // namespace

TEST_CASE("GPT-2's tokenizer gives the book's ids", "[gpt2][tokenizer]") {
  // ../shared/data/gpt2/README.md: chapter 2's examples, and the book's six tokens.
  CHECK(ids_of("Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace.") ==
        std::vector<std::int64_t>{15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114,
                                  286, 617, 34680, 27271, 13});
  CHECK(ids_of("Akwirw ier") == std::vector<std::int64_t>{33901, 86, 343, 86, 220, 959});
  CHECK(ids_of("Your journey starts with one step") == std::vector<std::int64_t>{7120, 7002, 4940, 351, 530, 2239});
  CHECK(Gpt2Tokenizer::bundled().vocabulary_size() == 50257);
  // Each token's bytes: a leading space belongs to the word after it, as GPT-2 splits text.
  const auto tokens = Gpt2Tokenizer::bundled().encode("Your journey starts");
  REQUIRE(tokens.size() == 3);
  CHECK(tokens[0].bytes == "Your");
  CHECK(tokens[1].bytes == " journey");
  CHECK(tokens[2].bytes == " starts");
  CHECK(Gpt2Tokenizer::bundled().encode("<|endoftext|>")[0].bytes == "<|endoftext|>");
}

TEST_CASE("GPT-2's tokenizer gives the reference BPE's ids for 401 strings", "[gpt2][tokenizer][golden]") {
  std::ifstream in(ATTN_TESTS_DIR "/golden/gpt2_tokens.json");
  REQUIRE(in.good());
  const auto golden = nlohmann::json::parse(in);
  std::size_t checked = 0, with_special = 0, non_ascii = 0;
  for (const auto& c : golden.at("cases")) {
    const std::string text = c.at("text");
    INFO("text " << nlohmann::json(text).dump());
    CHECK(ids_of(text) == c.at("ids").get<std::vector<std::int64_t>>());
    // The tokens' bytes put back together are the text.
    std::string joined;
    for (const auto& t : Gpt2Tokenizer::bundled().encode(text)) joined += t.bytes;
    CHECK(joined == text);
    ++checked;
    with_special += text.find("<|endoftext|>") != std::string::npos ? 1 : 0;
    non_ascii += std::any_of(text.begin(), text.end(), [](char ch) { return static_cast<unsigned char>(ch) >= 0x80; });
  }
  CHECK(checked == 401);
  CHECK(with_special >= 20);
  CHECK(non_ascii >= 100);
}

TEST_CASE("GPT-2's tokenizer: bytes that are not whole characters are shown as Python shows bytes", "[gpt2][tokenizer]") {
  // An emoji GPT-2 has no single token for comes out as byte tokens that only together make the character.
  const auto tokens = Gpt2Tokenizer::bundled().encode("\xf0\x9f\xa6\x99");  // U+1F999, a llama
  REQUIRE(tokens.size() == 3);
  CHECK(tokens[0].bytes + tokens[1].bytes + tokens[2].bytes == "\xf0\x9f\xa6\x99");
  CHECK(attn::token_repr(tokens[0].bytes) == "b'\\xf0\\x9f'");  // decode_single_token_bytes: b'\xf0\x9f'
  CHECK(attn::token_repr(tokens[1].bytes) == "b'\\xa6'");
  CHECK(attn::token_repr(tokens[2].bytes) == "b'\\x99'");
  CHECK_THROWS_AS(Gpt2Tokenizer::bundled().encode("bad \xff byte"), attn::UsageError);
}

TEST_CASE("GPT-2's tokenizer files: a broken vocabulary or merges file is an input error naming it", "[gpt2][tokenizer]") {
  const attn_test::Scratch s;
  const std::string merges = s.file("merges.txt", "#version: 0.2\nh e\n");
  const auto vocab_with = [&](const std::string& name, const std::string& json) { return s.file(name, json); };
  struct Bad {
    std::string vocabulary, merges, needle;
  };
  std::string bytes_only = "{";
  for (std::size_t b = 0; b < attn::gpt2_byte_symbols().size(); ++b)
    bytes_only += nlohmann::json(attn::gpt2_byte_symbols()[b]).dump() + ": " + std::to_string(b) + ", ";
  const std::string good = bytes_only + "\"<|endoftext|>\": 256}";
  const std::vector<Bad> cases{
      {s.dir + "/missing.json", merges, "missing.json: cannot open"},
      {vocab_with("array.json", "[1, 2]"), merges, "not a JSON object"},
      {vocab_with("syntax.json", "{\"a\": }"), merges, "not valid JSON"},
      {vocab_with("latin1.json", "{\"\xe9\": 0}"), merges, "not UTF-8"},
      {vocab_with("noeot.json", bytes_only + "\"xy\": 256}"), merges, "no <|endoftext|>"},
      {vocab_with("dup.json", bytes_only + "\"<|endoftext|>\": 3}"), merges, "is not a new whole number"},
      {vocab_with("nobytes.json", "{\"<|endoftext|>\": 0}"), merges, "lacks the byte token"},
      {vocab_with("good.json", good), s.file("m1.txt", "#version: 0.2\nhe\n"), "m1.txt:2: expected a merge"},
      {vocab_with("good2.json", good), s.file("m2.txt", "#version: 0.2\n"), "has no merges"},
      // Inconsistent with the vocabulary: a merge whose result, or one of whose symbols, it lacks. Both
      // files are named (a text reaching the merge once ended in an error that named neither).
      {vocab_with("good3.json", good), s.file("m3.txt", "#version: 0.2\nh e\n"),
       "m3.txt:2: merges \"h\" and \"e\" into \"he\", which " + s.dir + "/good3.json lacks"},
      {vocab_with("good4.json", bytes_only + "\"<|endoftext|>\": 256, \"he\": 257}"),
       s.file("m4.txt", "#version: 0.2\nh e\nhe llo\n"), "m4.txt:3: the merge's symbol \"llo\" is not a token of " +
       s.dir + "/good4.json"},
  };
  for (const auto& c : cases) {
    INFO(c.needle);
    try {
      (void)Gpt2Tokenizer::load(c.vocabulary, c.merges);
      FAIL("accepted");
    } catch (const attn::InputError& e) {
      CHECK(std::string(e.what()).find(c.needle) != std::string::npos);
    }
  }
  // A vocabulary of the bytes alone, with one merge, still tokenizes: "he" merges, "x" stays a byte.
  const Gpt2Tokenizer tiny = Gpt2Tokenizer::load(vocab_with("tiny.json", bytes_only + "\"<|endoftext|>\": 256, \"he\": 257}"),
                                                 merges);
  const auto tokens = tiny.encode("hex");
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0].id == 257);
  CHECK(tokens[1].bytes == "x");
}

namespace {

// encoder.py's bpe() transcribed directly (the lowest-ranked pair, all of its occurrences merged left to
// right, until none has a rank): the reference the tokenizer's heap-based merge is held to.
std::vector<std::string> reference_bpe(const std::string& piece, const std::map<std::string, std::size_t>& rank) {
  std::vector<std::string> word;
  for (const unsigned char b : piece) word.push_back(attn::gpt2_byte_symbols()[b]);
  for (;;) {
    std::size_t best = SIZE_MAX;
    std::string first, second;
    for (std::size_t i = 0; i + 1 < word.size(); ++i) {
      const auto it = rank.find(word[i] + " " + word[i + 1]);
      if (it != rank.end() && it->second < best) {
        best = it->second;
        first = word[i];
        second = word[i + 1];
      }
    }
    if (best == SIZE_MAX) return word;
    std::vector<std::string> next;
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (i + 1 < word.size() && word[i] == first && word[i + 1] == second) {
        next.push_back(first + second);
        ++i;
      } else {
        next.push_back(word[i]);
      }
    }
    word = next;
  }
}

}  // namespace

TEST_CASE("GPT-2's tokenizer: the merges give encoder.py's loop's tokens on words made to stress them",
          "[gpt2][tokenizer]") {
  std::map<std::string, std::size_t> rank;
  {
    std::ifstream merges(ATTN_SOURCE_DIR "/data/gpt2/vocab.bpe");
    std::string line;
    std::getline(merges, line);  // #version
    std::size_t index = 0;
    while (std::getline(merges, line))
      if (!line.empty()) rank[line] = index++;  // encoder.py's dict(zip(bpe_merges, range(...))): the last line wins
  }
  std::ifstream vocab_file(ATTN_SOURCE_DIR "/data/gpt2/encoder.json");
  const auto vocab = nlohmann::json::parse(vocab_file);
  const Gpt2Tokenizer& t = Gpt2Tokenizer::bundled();
  // Words of one pre-token each (letters only, or digits only): runs of one letter, two letters
  // alternating, and random words over small alphabets, where equal pairs overlap and merges chain.
  std::vector<std::string> words;
  for (const std::size_t n : {1u, 2u, 3u, 7u, 16u, 33u, 100u, 257u}) {
    words.push_back(std::string(n, 'a'));
    words.push_back(std::string(n, 'e'));
    std::string ab;
    for (std::size_t i = 0; i < n; ++i) ab += "ab"[i % 2];
    words.push_back(ab);
    words.push_back(std::string(n, '7'));
  }
  std::uint64_t state = 12345;
  for (int k = 0; k < 300; ++k) {
    std::string w;
    const std::size_t n = 1 + (state >> 33) % 40;
    for (std::size_t i = 0; i < n; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      w += "aeinrst"[(state >> 33) % (k % 2 ? 3 : 7)];
    }
    words.push_back(w);
  }
  for (const std::string& w : words) {
    INFO(w);
    std::vector<std::int64_t> want;
    for (const std::string& symbol : reference_bpe(w, rank)) want.push_back(vocab.at(symbol).get<std::int64_t>());
    std::vector<std::int64_t> got;
    for (const auto& token : t.encode(w)) got.push_back(token.id);
    CHECK(got == want);
  }
}

TEST_CASE("GPT-2's tokenizer: a text past the token limit is refused in bounded time, however it is made",
          "[gpt2][tokenizer]") {
  const Gpt2Tokenizer& t = Gpt2Tokenizer::bundled();
  // Each of these once took from seconds to minutes: the merges were quadratic in a word's length, and
  // the limit was checked on the whole count after them. The merge count is now O(n log n) and the
  // count stops at the limit. (Their time is not asserted here: the e2e case below runs them under a
  // timeout.)
  const std::vector<std::string> texts{std::string(120000, 'a'), std::string(120000, '1'), std::string(120000, '!'),
                                       std::string(120000, ' ') + "a", [] {
                                         std::string ab;
                                         for (int i = 0; i < 60000; ++i) ab += "ab";
                                         return ab;
                                       }()};
  for (const auto& text : texts) {
    INFO(text.substr(0, 8) << "... (" << text.size() << " bytes)");
    CHECK_FALSE(t.encode(text, 8192).has_value());
    const auto all = t.encode(text, SIZE_MAX);
    REQUIRE(all.has_value());
    CHECK(all->size() > 8192);
    std::string back;
    for (const auto& token : *all) back += token.bytes;
    CHECK(back == text);
  }
  // At the limit and one past it: the count is exact, not an estimate.
  const std::string words = [] {
    std::string w;
    for (int i = 0; i < 100; ++i) w += " the";
    return w;
  }();
  CHECK(t.encode(words, 100).has_value());
  CHECK_FALSE(t.encode(words, 99).has_value());
  // A text of more words than the limit is refused on its pieces, before any merge: 20,000 words make at
  // least 20,000 tokens. One long word is not (its bound is its length / 128 bytes, GPT-2's longest
  // token): the merges run, in O(n log n), and stop there.
  std::string many;
  for (int i = 0; i < 20000; ++i) many += " word";
  CHECK(t.fewest_tokens(many) == 20000);
  CHECK_FALSE(t.encode(many, 8192).has_value());
  CHECK(t.fewest_tokens(std::string(120000, 'a')) == 120000 / 128 + 1);
  CHECK(t.fewest_tokens("a<|endoftext|>b") == 3);
}

TEST_CASE("GPT-2's tokenizer: a merge listed twice takes its last line's rank, as encoder.py's dict does",
          "[gpt2][tokenizer]") {
  const attn_test::Scratch s;
  std::string vocab = "{";
  for (std::size_t b = 0; b < attn::gpt2_byte_symbols().size(); ++b)
    vocab += nlohmann::json(attn::gpt2_byte_symbols()[b]).dump() + ": " + std::to_string(b) + ", ";
  vocab += "\"<|endoftext|>\": 256, \"ab\": 257, \"bc\": 258}";
  // "a b" on lines 1 and 3, "b c" on line 2: encoder.py ranks "a b" 2 (its last line), so "b c" merges
  // first in "abc"; ranked by its first line, "a b" would.
  const Gpt2Tokenizer t = Gpt2Tokenizer::parse(vocab, "v.json", "#version: 0.2\na b\nb c\na b\n", "m.txt");
  const auto tokens = t.encode("abc");
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0].bytes == "a");
  CHECK(tokens[1].id == 258);
}
