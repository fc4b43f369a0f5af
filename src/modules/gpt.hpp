#pragma once
// Chapter 4's modules as C++ types: LayerNorm, GELU, FeedForward, TransformerBlock, GPTModel and the
// chapter's DummyGPTModel, with 4.4's ExampleDeepNeuralNetwork and the backward pass that shows why shortcut
// connections matter. Each constructor draws its parameters from a TorchGenerator in the order the book's
// __init__ does (nn.Embedding's normal_ init, then nn.Linear's kaiming-uniform one, layer by layer), so a
// model built after gen.manual_seed(s) holds the same numbers as PyTorch's after torch.manual_seed(s); each
// forward takes the generator its dropout draws from, in training mode, or none in eval mode.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/nn.hpp"
#include "core/tensor.hpp"
#include "core/torch_random.hpp"
#include "modules/attention.hpp"

namespace attn {

// GPT_CONFIG_124M's keys. The three dropout rates are the book's one drop_rate unless exercise 4.3 gives
// each its own (drop_rate_emb, drop_rate_attn, drop_rate_shortcut).
struct GptConfig {
  std::size_t vocab_size = 50257;
  std::size_t context_length = 1024;
  std::size_t emb_dim = 768;
  std::size_t n_heads = 12;
  std::size_t n_layers = 12;
  double drop_rate_emb = 0.1;
  double drop_rate_attn = 0.1;
  double drop_rate_shortcut = 0.1;
  bool qkv_bias = false;

  // sum(p.numel() for p in model.parameters()), from the shapes alone (exercise 4.2 counts GPT-2's four sizes
  // so), and its parts.
  std::size_t attention_parameters() const;     // one block's MultiHeadAttention
  std::size_t feed_forward_parameters() const;  // one block's FeedForward
  std::size_t block_parameters() const;         // one TransformerBlock: both, and its two LayerNorms
  std::size_t gpt_parameters() const;           // GPTModel: embeddings, blocks, final norm, out_head
  std::size_t dummy_parameters() const;         // DummyGPTModel: embeddings and out_head only
};

// GELU's tanh approximation, elementwise, as the book's class computes it (torch.pow, torch.tanh).
AnyTensor gelu(const AnyTensor& x);
// nn.ReLU, elementwise: max(x, 0) (NaN stays NaN, -0.0 becomes 0.0 as torch.relu's clamp_min does).
AnyTensor relu(const AnyTensor& x);

// The book's LayerNorm (not nn.LayerNorm): scale ones and shift zeros, eps 1e-5, the biased variance.
struct LayerNorm {
  explicit LayerNorm(std::size_t emb_dim);
  AnyTensor forward(const AnyTensor& x) const;  // (..., emb_dim) -> the same shape
  std::size_t num_parameters() const { return scale.size() + shift.size(); }

  float eps = 1e-5f;
  Vector scale;  // (emb_dim,): ones
  Vector shift;  // (emb_dim,): zeros
};

// x.mean(dim=-1, keepdim=True) and x.var(dim=-1, keepdim=True, unbiased=...): (..., d) -> (..., 1), as PyTorch
// adds them (the mean: the sum in its order, then divided; the variance: Welford's update in double).
AnyTensor mean_last(const AnyTensor& x);
AnyTensor var_last(const AnyTensor& x, bool unbiased);

// nn.Linear on a tensor of any rank >= 2 (the last dimension the features), as one (rows, in) product.
AnyTensor linear(const Linear& layer, const AnyTensor& x);

// 4.3: Linear(emb_dim, 4 * emb_dim), GELU, Linear(4 * emb_dim, emb_dim).
struct FeedForward {
  FeedForward(std::size_t emb_dim, TorchGenerator& gen);
  // Every intermediate of forward: the expansion, its GELU, and the projection back.
  struct Pass {
    AnyTensor expanded;   // (..., 4 * emb_dim): layers[0](x)
    AnyTensor activated;  // (..., 4 * emb_dim): layers[1](expanded)
    AnyTensor out;        // (..., emb_dim): layers[2](activated)
  };
  Pass pass(const AnyTensor& x) const;
  AnyTensor forward(const AnyTensor& x) const { return pass(x).out; }
  std::size_t num_parameters() const { return fc1.num_parameters() + fc2.num_parameters(); }

  Linear fc1;  // layers[0]: (4 * emb_dim, emb_dim)
  Linear fc2;  // layers[2]: (emb_dim, 4 * emb_dim)
};

// How a forward runs: in training mode (model.train(), the default) every nn.Dropout draws its mask from
// `gen`; in eval mode (model.eval()) none does, and `gen` is not read.
struct ForwardMode {
  TorchGenerator* gen = nullptr;  // null: eval mode
  DropoutRng rng = DropoutRng::Default;
  bool training() const { return gen != nullptr; }
};

// 4.5: x + drop_shortcut(att(norm1(x))), then that + drop_shortcut(ff(norm2(that))).
struct TransformerBlock {
  TransformerBlock(const GptConfig& cfg, TorchGenerator& gen);
  struct Pass {
    Tensor3 norm1;            // (b, n, emb_dim)
    MultiHeadPass att;        // the attention's every intermediate; att.context_vecs is its output
    Tensor3 att_dropped;      // drop_shortcut(att(norm1(x)))
    Tensor3 first_shortcut;   // + x: the attention's half of the block done
    Tensor3 norm2;            // (b, n, emb_dim)
    FeedForward::Pass ff;     // the feed-forward's every intermediate
    Tensor3 ff_dropped;       // drop_shortcut(ff(norm2(...)))
    Tensor3 out;              // + first_shortcut: the block's output
  };
  Pass pass(const Tensor3& x, const ForwardMode& mode) const;
  Tensor3 forward(const Tensor3& x, const ForwardMode& mode) const;
  std::size_t num_parameters() const;

  MultiHeadAttention att;
  FeedForward ff;
  LayerNorm norm1, norm2;
  double drop_shortcut;
};

// 4.6: token and positional embeddings, dropout, n_layers blocks, a final LayerNorm and the output head.
struct GPTModel {
  GPTModel(const GptConfig& cfg, TorchGenerator& gen);
  struct Pass {
    Tensor3 tok_embeds;               // (b, n, emb_dim)
    Tensor3 pos_embeds;               // (1, n, emb_dim): broadcast over the batch
    Tensor3 x;                        // (b, n, emb_dim): their sum
    Tensor3 x_dropped;                // drop_emb(x)
    std::vector<Tensor3> block_outs;  // (b, n, emb_dim): after each block, in order
    Tensor3 final_norm;               // (b, n, emb_dim)
    Tensor3 logits;                   // (b, n, vocab_size)
  };
  // in_idx (b, n): token ids, each below vocab_size, n at most context_length (checked by the caller).
  Pass pass(const std::vector<std::vector<std::int64_t>>& in_idx, const ForwardMode& mode) const;
  Tensor3 forward(const std::vector<std::vector<std::int64_t>>& in_idx, const ForwardMode& mode) const;
  std::size_t num_parameters() const;

  GptConfig cfg;
  Matrix tok_emb;  // (vocab_size, emb_dim): nn.Embedding's weight
  Matrix pos_emb;  // (context_length, emb_dim)
  std::vector<TransformerBlock> trf_blocks;
  LayerNorm final_norm;
  Linear out_head;  // (vocab_size, emb_dim), no bias
};

// 4.1: the same outline with placeholders: the blocks and the final norm return their input.
struct DummyGPTModel {
  DummyGPTModel(const GptConfig& cfg, TorchGenerator& gen);
  struct Pass {
    Tensor3 tok_embeds, pos_embeds, x, x_dropped, logits;
  };
  Pass pass(const std::vector<std::vector<std::int64_t>>& in_idx, const ForwardMode& mode) const;
  std::size_t num_parameters() const { return tok_emb.size() + pos_emb.size() + out_head.num_parameters(); }

  GptConfig cfg;
  Matrix tok_emb;  // (vocab_size, emb_dim)
  Matrix pos_emb;  // (context_length, emb_dim)
  Linear out_head;  // (vocab_size, emb_dim), no bias
};

// nn.Embedding(num, dim)'s weight drawn as its init does: normal_() over the whole table, row-major.
Matrix embedding_weight(std::size_t num, std::size_t dim, TorchGenerator& gen);

// 4.4: ExampleDeepNeuralNetwork(layer_sizes, use_shortcut): five Linear + GELU layers, each added to its input
// where their shapes agree and use_shortcut is set.
struct ExampleDeepNeuralNetwork {
  ExampleDeepNeuralNetwork(const std::vector<std::size_t>& layer_sizes, bool use_shortcut, TorchGenerator& gen);
  // print_gradients' computation: the forward on x (1, layer_sizes[0]), nn.MSELoss against zeros, and
  // loss.backward() written out as PyTorch 1.13's autograd runs it (each op's derivative formula, in float32,
  // the gradients of a tensor used twice summed in the order its engine adds them), so the gradients are
  // autograd's to the bit.
  struct Gradients {
    Matrix output;                      // (1, layer_sizes.back())
    float loss = 0.0f;                  // the mean squared error
    std::vector<Matrix> weight_grads;   // per layer: (out, in)
    std::vector<Vector> bias_grads;     // per layer: (out,)
    std::vector<float> grad_means;      // per layer: weight.grad.abs().mean()
  };
  Gradients gradients(const Matrix& x) const;

  bool use_shortcut;
  std::vector<Linear> layers;  // layers[i][0]
};

}  // namespace attn
