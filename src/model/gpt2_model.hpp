#pragma once
// --model DIR: a pretrained GPT-2 as Hugging Face ships it (config.json, model.safetensors, vocab.json and
// merges.txt), run as chapter 4's GPTModel with the weights chapter 5's load_weights_into_gpt gives it.
// The file is memory-mapped (src/model/safetensors) and every tensor is checked against config.json when the
// model is loaded. The forward reads F32 weights where they lie in the mapping; F16 and BF16 ones are
// converted to float32 when a layer uses them.
//
// GPTModel.forward up to block L, whose norm1 output is what a lesson then takes as its inputs:
//   x_0 = tok_emb(token_ids) + pos_emb(arange(n))                      (n, n_embd)
//   x_{l+1} = TransformerBlock_l(x_l):  x + att(norm1(x)), then that + ff(norm2(that))
//   inputs = trf_blocks[L].norm1(x_L)
// and after the lesson, for mha's next-token steps: the rest of the blocks, final_norm, out_head (tied to
// tok_emb's weight).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/nn.hpp"
#include "core/tensor.hpp"
#include "model/gpt2_tokenizer.hpp"
#include "model/safetensors.hpp"

namespace attn {

// The keys of config.json attn reads (GPT2Config's names; n_ctx is the older spelling of n_positions).
struct Gpt2Config {
  std::size_t vocab_size = 0;
  std::size_t n_positions = 0;  // context_length
  std::size_t n_embd = 0;       // emb_dim
  std::size_t n_layer = 0;
  std::size_t n_head = 0;
  double layer_norm_epsilon = 1e-5;
  std::size_t head_dim() const { return n_embd / n_head; }
};

// One block's attention in nn.Linear's layout, as load_weights_into_gpt splits c_attn: weight (out, in).
struct Gpt2Attention {
  Linear W_query;   // (n_embd, n_embd), with bias
  Linear W_key;     // (n_embd, n_embd)
  Linear W_value;   // (n_embd, n_embd)
  Linear out_proj;  // (n_embd, n_embd): c_proj
};

// A model directory before it is loaded: config.json read and checked, the other three files checked to
// be regular files within their caps, and their sizes, from which the memory a run needs is estimated
// before any of them is read (docs/performance.md).
struct Gpt2Files {
  std::string dir, base;  // as given, and with a trailing '/'
  Gpt2Config config;
  // The three files, open: what is read and mapped later is what was checked and sized here.
  RegularFile vocabulary, merges, weights;
  std::size_t header_bytes = 0;  // the weights file's header, as its first 8 bytes say

  static Gpt2Files inspect(const std::string& dir);  // InputErrors as Gpt2Model::load gives them
  Gpt2Tokenizer read_tokenizer() const;              // from the files opened here
  // The tokenizer's memory while it is loaded.
  std::size_t tokenizer_bytes() const;
  // The weights (mapped whole) and the forward of `n` tokens to block `layer`, with the next-token steps.
  std::size_t forward_bytes(std::size_t n, std::size_t layer) const;  // mapped_bytes + activation_bytes
  std::size_t mapped_bytes() const;  // the weights, mapped whole, and their header parsed
  // What a forward of n tokens to block `layer` computes, from the config alone.
  static std::size_t activation_bytes(const Gpt2Config& config, std::size_t n, std::size_t layer);
};

class Gpt2Model {
 public:
  // Reads and checks DIR: an InputError (exit 1) names the file and what is wrong.
  static std::shared_ptr<const Gpt2Model> load(const std::string& dir);
  // The same from an inspected directory (its weights file is mapped from it) and its tokenizer.
  static std::shared_ptr<const Gpt2Model> load(Gpt2Files files, Gpt2Tokenizer tokenizer);

  const Gpt2Config& config() const { return config_; }
  const Gpt2Tokenizer& tokenizer() const { return tokenizer_; }
  const std::string& dir() const { return dir_; }

  Matrix token_embeddings(const std::vector<std::int64_t>& ids) const;  // (len(ids), n_embd): tok_emb rows
  Matrix position_embeddings(std::size_t n) const;                     // (n, n_embd): pos_emb rows 0..n-1
  Matrix norm1(const Matrix& x, std::size_t layer) const;               // (n, n_embd) -> (n, n_embd)
  Matrix block(const Matrix& x, std::size_t layer) const;               // (n, n_embd) -> (n, n_embd): x_{l+1}
  Gpt2Attention attention(std::size_t layer) const;
  // Blocks `from`.. to the last, final_norm and out_head on the last token of x_from: (vocab_size,) logits.
  Vector next_token_logits(const Matrix& x_from, std::size_t from) const;

  explicit Gpt2Model(SafetensorsFile file, Gpt2Tokenizer tokenizer) : file_(std::move(file)), tokenizer_(std::move(tokenizer)) {}

 private:
  const SafeTensor& tensor(const std::string& name) const;     // a checked tensor, by its name without the prefix
  Vector vector(const std::string& name) const;                // (size,)
  Matrix matrix(const std::string& name) const;                // (rows, cols) as stored
  Matrix layer_norm_of(const Matrix& x, const std::string& prefix) const;
  // Hugging Face's Conv1D `name`: x (n, in) @ name.weight (in, out) + name.bias.
  Matrix conv1d(const Matrix& x, const std::string& name) const;
  // The same product as `parts` products side by side, one per equal share of the columns: c_attn's
  // queries, keys and values, each as the book's own nn.Linear computes it.
  Matrix conv1d_parts(const Matrix& x, const std::string& name, std::size_t parts) const;

  SafetensorsFile file_;
  Gpt2Tokenizer tokenizer_;
  Gpt2Config config_;
  std::string dir_;
  std::string prefix_;  // "transformer." when the file names its tensors so (GPT2LMHeadModel), else ""
};

// The head `head` of a full projection: rows [head * head_dim, (head + 1) * head_dim) of its weight and
// bias, the d_out = head_dim layer a single-head lesson uses. (n_embd, n_embd) -> (head_dim, n_embd).
Linear head_rows(const Linear& full, std::size_t head, std::size_t head_dim);

// What a lesson takes from --model (Inputs::model): the layer, block L's real attention weights and the x
// entering block L (for the next-token steps of mha). A lesson of one head picks it with --head
// (LessonConfig::head).
struct ModelLayer {
  std::shared_ptr<const Gpt2Model> model;
  std::size_t layer = 0;
  Gpt2Attention attention;
  Matrix block_input;  // (num_tokens, n_embd): x_L
};

}  // namespace attn
