#include "inputs/text.hpp"

#include <limits>

#include <unordered_map>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "core/torch_random.hpp"
#include "model/gpt2_tokenizer.hpp"

namespace attn {

namespace {

// Rows `ids` of nn.Embedding(num_embeddings, dim)'s weight, drawn now from `gen` (normal_ over the whole
// (num_embeddings, dim) table, as nn.Embedding's init does); only the rows asked for are kept.
Matrix embedding_rows(TorchGenerator& gen, std::size_t num_embeddings, std::size_t dim, const std::vector<std::int64_t>& ids) {
  std::unordered_multimap<std::size_t, std::size_t> rows_of;  // table row -> output rows
  for (std::size_t r = 0; r < ids.size(); ++r) rows_of.emplace(static_cast<std::size_t>(ids[r]), r);
  Matrix out = xt::zeros<float>({ids.size(), dim});  // (len(ids), dim)
  gen.normal(num_embeddings * dim, [&](std::size_t i, float v) {
    const auto [first, last] = rows_of.equal_range(i / dim);
    for (auto it = first; it != last; ++it) out(it->second, i % dim) = v;
  });
  return out;
}

// The book's tokenizer lines, token_ids' code.
constexpr const char* kTokenizerLines = "tokenizer = tiktoken.get_encoding(\"gpt2\")\n"
                                        "token_ids = torch.tensor(tokenizer.encode(text, allowed_special={\"<|endoftext|>\"}))";

// The notebook's token_ids (--format py, ipynb): the text, then those lines when tiktoken is installed, else
// the ids this tokenizer gave, which tiktoken's "gpt2" encoding gives too.
std::string notebook_tokenizer(const std::string& text, const std::vector<std::int64_t>& ids) {
  std::string literal, indented = "    ";
  for (std::size_t i = 0; i < ids.size(); ++i) literal += (i ? ", " : "") + std::to_string(ids[i]);
  for (const char* c = kTokenizerLines; *c != '\0'; ++c) indented += *c == '\n' ? std::string("\n    ") : std::string(1, *c);
  return "text = " + py_repr(text) + "\ntry:\n    import tiktoken\n" + indented +
         "\nexcept (ImportError, OSError):  # no tiktoken, or no network for its vocabulary: the ids attn found\n"
         "    token_ids = torch.tensor([" + literal + "])";
}

}  // namespace

void tokenize_into(Inputs& in, const Gpt2Tokenizer& tokenizer, const std::string& text, std::size_t max_tokens,
                   const std::string& limit) {
  // Counted as they are made, and stopped past the limit: the whole count of a long text is never known.
  const std::optional<std::vector<Gpt2Token>> encoded = tokenizer.encode(text, max_tokens);
  if (!encoded)
    throw UsageError("--text has more tokens than " + limit + " of " + with_commas(max_tokens) + " (" +
                     with_commas(text.size()) + " bytes)");
  const std::vector<Gpt2Token>& tokens = *encoded;
  if (tokens.empty()) throw UsageError("--text has no tokens (give it a word or more)");
  const std::size_t n = tokens.size();
  std::string listed;
  bool split_character = false;
  for (std::size_t i = 0; i < n; ++i) {
    in.token_ids.push_back(tokens[i].id);
    in.tokens.push_back(tokens[i].bytes);  // the token's bytes, as decode_single_token_bytes gives them
    split_character = split_character || !valid_utf8(tokens[i].bytes);
    if (i < 12) listed += (i ? ", " : "") + token_repr(in.tokens.back()) + " " + std::to_string(tokens[i].id);
  }
  Vector ids = xt::empty<float>({n});  // (num_tokens,)
  for (std::size_t i = 0; i < n; ++i) ids(i) = static_cast<float>(tokens[i].id);
  InputStep step = input_step("token_ids", {{"n", std::to_string(n)}, {"listed", listed}, {"more", std::to_string(n > 12 ? n - 12 : 0)}},
                              kTokenizerLines, AnyTensor(ids));
  // The clauses only some texts need: bytes of a split character, the tokens past the first 12.
  if (split_character) step.phrases["split"] = "split_bytes";
  else step.values["split"] = "";
  if (n > 12) step.phrases["rest"] = "more_tokens";
  else step.values["rest"] = "";
  step.integer = true;
  step.run = notebook_tokenizer(text, in.token_ids);
  in.steps.push_back(std::move(step));
}

Inputs inputs_from_text(const std::string& text, std::size_t d_in, std::uint64_t seed) {
  Inputs in;
  tokenize_into(in, Gpt2Tokenizer::bundled(), text, kMaxTokens, "the limit");
  const std::size_t n = in.token_ids.size();
  TorchGenerator gen(seed);
  std::vector<std::int64_t> positions(n);
  for (std::size_t i = 0; i < n; ++i) positions[i] = static_cast<std::int64_t>(i);
  const Matrix token_embeddings = embedding_rows(gen, kGpt2VocabularySize, d_in, in.token_ids);  // (n, d_in)
  const Matrix pos_embeddings = embedding_rows(gen, n, d_in, positions);                        // (n, d_in)
  in.embeddings = token_embeddings + pos_embeddings;                                             // (n, d_in)
  const std::string d = std::to_string(d_in), s = std::to_string(seed), ctx = std::to_string(n);
  in.source = "--text: GPT-2's tokenizer, then nn.Embedding(50257, " + d + ") + nn.Embedding(" + ctx + ", " + d +
              ") after torch.manual_seed(" + s + ")";  // the English of inputs.json's source_text, for messages
  in.source_phrase = "source_text";
  in.source_values = {{"d", d}, {"ctx", ctx}, {"seed", s}};
  in.steps.push_back(input_step("token_embeddings", {},
                                "torch.manual_seed(" + s + ")\ntoken_embedding_layer = torch.nn.Embedding(50257, " + d +
                                    ")\ntoken_embeddings = token_embedding_layer(token_ids)",
                                AnyTensor(token_embeddings)));
  in.steps.push_back(input_step("pos_embeddings", {},
                                "context_length = " + ctx + "\npos_embedding_layer = torch.nn.Embedding(context_length, " + d +
                                    ")\npos_embeddings = pos_embedding_layer(torch.arange(context_length))",
                                AnyTensor(pos_embeddings)));
  in.steps.push_back(input_step("input_embeddings", {}, "input_embeddings = token_embeddings + pos_embeddings\ninputs = input_embeddings",
                                AnyTensor(in.embeddings)));
  return in;
}

InputSource text_source() {
  const std::string sizes = "it sizes and seeds the embeddings of your own sentence";
  const std::string embeds = ", whose own trained embeddings are used";
  SourceOption text{"--text", "TEXT",
                    "Your own sentence instead: GPT-2's tokens of it, each embedded as chapter 2 does (nn.Embedding for "
                    "the tokens plus one for their positions, after torch.manual_seed); the ids and embeddings are the "
                    "first steps (docs/inputs.md)",
                    &InputOptions::text};
  text.rules = {{SourceRule::Exclusive, "--random", ""}, {SourceRule::Exclusive, "--input", ""}};
  // Every run draws the whole (50257, d_in) table, which takes about a second at 1,024 (GPT-2 medium's size).
  SourceOption d_in{"--d-in", "N",
                    "With --text: the size of each token's embedding (the book's toy uses 3, GPT-2 small 768)",
                    &InputOptions::d_in, 1, 1024};
  d_in.rules = {{SourceRule::NotWith, "--model", embeds}, {SourceRule::OnlyWith, "--text", sizes}};
  SourceOption seed{"--embedding-seed", "N",
                    "With --text: the torch.manual_seed before the two embedding layers (chapter 2's 123)",
                    &InputOptions::embedding_seed, 0, std::numeric_limits<std::uint64_t>::max()};
  seed.rules = d_in.rules;
  // With --model the text is the model's to tokenize: this source is asked for only without it.
  return {"text", [](const InputOptions& opt) { return opt.text.has_value() && opt.model.empty(); },
          [](const InputOptions& opt, std::istream&, const CheckMemory&) {
            return inputs_from_text(*opt.text, opt.d_in, opt.embedding_seed);
          },
          [](const InputOptions& opt, nlohmann::ordered_json& config) {
            config["text"] = *opt.text;
            config["d_in"] = opt.d_in;
            config["embedding_seed"] = opt.embedding_seed;
          },
          {text, d_in, seed}};
}

}  // namespace attn
