#include "inputs/text.hpp"

#include <limits>

#include <unordered_map>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/strings.hpp"
#include "core/terminal_text.hpp"
#include "core/torch_random.hpp"
#include "inputs/input_text.hpp"
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
  for (const Gpt2Token& token : tokens) {
    in.token_ids.push_back(token.id);
    in.tokens.push_back(token.bytes);  // the token's bytes, as decode_single_token_bytes gives them
  }
}

InputStep token_ids_step(const Inputs& in, const std::string& text, const Words& words, const std::string& variant,
                         TextValues values) {
  const std::size_t n = in.token_ids.size();
  std::string listed, ids;
  bool split_character = false;
  for (std::size_t i = 0; i < n; ++i) {
    split_character = split_character || !valid_utf8(in.tokens[i]);
    if (i < 12) listed += (i ? ", " : "") + token_repr(in.tokens[i]) + " " + std::to_string(in.token_ids[i]);
    ids += (i ? ", " : "") + std::to_string(in.token_ids[i]);
  }
  Vector tensor = xt::empty<float>({n});  // (num_tokens,)
  for (std::size_t i = 0; i < n; ++i) tensor(i) = static_cast<float>(in.token_ids[i]);
  values["n"] = std::to_string(n);
  values["listed"] = listed;
  values["more"] = std::to_string(n > 12 ? n - 12 : 0);
  values["text"] = py_repr(text);  // the notebook's: tiktoken's ids when it is installed, else these
  values["ids"] = ids;
  // The clauses only some texts need: bytes of a split character, the tokens past the first 12.
  values["split"] = split_character ? input_phrase(words, "split_bytes", values) : "";
  values["rest"] = n > 12 ? input_phrase(words, "more_tokens", values) : "";
  InputStep step = input_step(words, "token_ids", values, AnyTensor(tensor), "", variant);
  step.integer = true;
  return step;
}

Inputs inputs_from_text(const std::string& text, std::size_t d_in, std::uint64_t seed, const Words& words) {
  Inputs in;
  tokenize_into(in, Gpt2Tokenizer::bundled(), text, kMaxTokens, "the limit");
  in.steps.push_back(token_ids_step(in, text, words, "text"));
  const std::size_t n = in.token_ids.size();
  TorchGenerator gen(seed);
  std::vector<std::int64_t> positions(n);
  for (std::size_t i = 0; i < n; ++i) positions[i] = static_cast<std::int64_t>(i);
  const Matrix token_embeddings = embedding_rows(gen, kGpt2VocabularySize, d_in, in.token_ids);  // (n, d_in)
  const Matrix pos_embeddings = embedding_rows(gen, n, d_in, positions);                        // (n, d_in)
  in.embeddings = token_embeddings + pos_embeddings;                                             // (n, d_in)
  const TextValues values{{"d", std::to_string(d_in)}, {"seed", std::to_string(seed)}, {"ctx", std::to_string(n)}};
  describe_source(in, words, "source_text", values);
  in.steps.push_back(input_step(words, "token_embeddings", values, AnyTensor(token_embeddings)));
  in.steps.push_back(input_step(words, "pos_embeddings", values, AnyTensor(pos_embeddings)));
  in.steps.push_back(input_step(words, "input_embeddings", values, AnyTensor(in.embeddings)));
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
          [](const InputOptions& opt, std::istream&, const CheckMemory&, const Words& words) {
            return inputs_from_text(*opt.text, opt.d_in, opt.embedding_seed, words);
          },
          [](const InputOptions& opt, nlohmann::ordered_json& config) {
            config["text"] = *opt.text;
            config["d_in"] = opt.d_in;
            config["embedding_seed"] = opt.embedding_seed;
          },
          {text, d_in, seed}};
}

}  // namespace attn
