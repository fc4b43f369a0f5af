// Chapter 4's modules (modules/gpt.hpp): each forward is the book's, op by op, in PyTorch's arithmetic.
#include "modules/gpt.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/cancel.hpp"

namespace attn {

std::size_t GptConfig::attention_parameters() const {
  const std::size_t projection = emb_dim * emb_dim + (qkv_bias ? emb_dim : 0);  // W_query, W_key, W_value
  return 3 * projection + emb_dim * emb_dim + emb_dim;                         // out_proj has a bias
}

std::size_t GptConfig::feed_forward_parameters() const {
  const std::size_t hidden = 4 * emb_dim;
  return (emb_dim * hidden + hidden) + (hidden * emb_dim + emb_dim);
}

std::size_t GptConfig::block_parameters() const {
  return attention_parameters() + feed_forward_parameters() + 2 * (2 * emb_dim);  // norm1, norm2
}

std::size_t GptConfig::gpt_parameters() const {
  return vocab_size * emb_dim + context_length * emb_dim + n_layers * block_parameters() + 2 * emb_dim +
         vocab_size * emb_dim;
}

std::size_t GptConfig::dummy_parameters() const {
  return vocab_size * emb_dim + context_length * emb_dim + vocab_size * emb_dim;
}

AnyTensor gelu(const AnyTensor& x) {
  AnyTensor out = x;  // the shape of x
  gelu_in_place(out.data(), out.size());
  return out;
}

AnyTensor relu(const AnyTensor& x) {
  AnyTensor out = x;  // the shape of x
  for (float& v : out)
    if (!std::isnan(v)) v = v > 0.0f ? v : 0.0f;
  return out;
}

namespace {

// The rows of a tensor whose last dimension is d: the product of the others.
std::size_t rows_of(const AnyTensor& x) {
  if (x.dimension() == 0) throw std::invalid_argument("a tensor of rank 0 has no last dimension");
  const std::size_t d = x.shape(x.dimension() - 1);
  return d == 0 ? 0 : x.size() / d;
}

// x viewed as (rows, d), copied: the 2-d forms of layer_norm and Linear take a Matrix.
Matrix as_rows(const AnyTensor& x) {
  const std::size_t d = x.shape(x.dimension() - 1), rows = rows_of(x);
  Matrix m = xt::empty<float>({rows, d});  // (rows, d)
  std::copy(x.data(), x.data() + x.size(), m.data());
  return m;
}

// m (rows, d') back to x's leading dimensions with last dimension d'.
AnyTensor with_leading(const Matrix& m, const AnyTensor& like) {
  std::vector<std::size_t> shape(like.shape().begin(), like.shape().end());
  shape.back() = m.shape(1);
  AnyTensor out = xt::empty<float>(shape);
  std::copy(m.data(), m.data() + m.size(), out.data());
  return out;
}

Tensor3 to3(const AnyTensor& x) {
  Tensor3 out = xt::empty<float>({x.shape(0), x.shape(1), x.shape(2)});  // (b, n, d)
  std::copy(x.data(), x.data() + x.size(), out.data());
  return out;
}

// The book's mean over the last dimension (torch.mean: the sum in PyTorch's order, then divided).
float row_mean(const float* row, std::size_t d) { return sum_of(row, d) / static_cast<float>(d); }

// torch.var over a row: Welford's update in double, as at::native's var kernel runs it, then rounded.
float row_var(const float* row, std::size_t d, bool unbiased) {
  double running_mean = 0.0, m2 = 0.0;
  for (std::size_t c = 0; c < d; ++c) {
    const double v = row[c], delta = v - running_mean;
    running_mean += delta / static_cast<double>(c + 1);
    m2 += delta * (v - running_mean);
  }
  const double divisor = static_cast<double>(unbiased ? d - 1 : d);
  return static_cast<float>(m2 / divisor);
}

// nn.Dropout(p) in the forward's mode: the mask drawn in training mode, the input itself in eval mode.
Tensor3 drop(const Tensor3& x, double p, const ForwardMode& mode) {
  if (!mode.training() || p == 0.0) return x;
  return to3(dropout(AnyTensor(x), p, *mode.gen, mode.rng));
}

// tok_emb(in_idx) + pos_emb(torch.arange(n)): (b, n, emb_dim), with both terms kept for the lesson.
void embed(const Matrix& tok_emb, const Matrix& pos_emb, const std::vector<std::vector<std::int64_t>>& in_idx,
           Tensor3& tok_embeds, Tensor3& pos_embeds, Tensor3& x) {
  const std::size_t b = in_idx.size(), n = b == 0 ? 0 : in_idx[0].size(), d = tok_emb.shape(1);
  if (n > pos_emb.shape(0)) throw std::invalid_argument("more tokens than the context length");
  tok_embeds = xt::empty<float>({b, n, d});  // (b, n, emb_dim)
  pos_embeds = xt::empty<float>({std::size_t{1}, n, d});  // (1, n, emb_dim)
  for (std::size_t t = 0; t < n; ++t) std::copy_n(&pos_emb(t, 0), d, &pos_embeds(0, t, 0));
  x = xt::empty<float>({b, n, d});  // (b, n, emb_dim)
  for (std::size_t i = 0; i < b; ++i) {
    if (in_idx[i].size() != n) throw std::invalid_argument("the batch's rows differ in length");
    for (std::size_t t = 0; t < n; ++t) {
      const std::int64_t id = in_idx[i][t];
      if (id < 0 || static_cast<std::size_t>(id) >= tok_emb.shape(0))
        throw std::invalid_argument("a token id past the vocabulary");
      const float* row = &tok_emb(static_cast<std::size_t>(id), 0);
      for (std::size_t c = 0; c < d; ++c) {
        tok_embeds(i, t, c) = row[c];
        x(i, t, c) = row[c] + pos_embeds(0, t, c);
      }
    }
  }
}

}  // namespace

AnyTensor mean_last(const AnyTensor& x) {
  const std::size_t d = x.shape(x.dimension() - 1), rows = rows_of(x);
  std::vector<std::size_t> shape(x.shape().begin(), x.shape().end());
  shape.back() = 1;
  AnyTensor out = xt::empty<float>(shape);  // (..., 1)
  for (std::size_t r = 0; r < rows; ++r) out.data()[r] = row_mean(x.data() + r * d, d);
  return out;
}

AnyTensor var_last(const AnyTensor& x, bool unbiased) {
  const std::size_t d = x.shape(x.dimension() - 1), rows = rows_of(x);
  std::vector<std::size_t> shape(x.shape().begin(), x.shape().end());
  shape.back() = 1;
  AnyTensor out = xt::empty<float>(shape);  // (..., 1)
  for (std::size_t r = 0; r < rows; ++r) out.data()[r] = row_var(x.data() + r * d, d, unbiased);
  return out;
}

AnyTensor linear(const Linear& layer, const AnyTensor& x) { return with_leading(layer.forward(as_rows(x)), x); }

LayerNorm::LayerNorm(std::size_t emb_dim) : scale(xt::ones<float>({emb_dim})), shift(xt::zeros<float>({emb_dim})) {}

AnyTensor LayerNorm::forward(const AnyTensor& x) const {
  return with_leading(layer_norm(as_rows(x), scale, shift, eps), x);
}

FeedForward::FeedForward(std::size_t emb_dim, TorchGenerator& gen)
    : fc1(emb_dim, 4 * emb_dim, /*bias=*/true, gen), fc2(4 * emb_dim, emb_dim, /*bias=*/true, gen) {}

FeedForward::Pass FeedForward::pass(const AnyTensor& x) const {
  Pass p;
  p.expanded = linear(fc1, x);            // (..., 4 * emb_dim)
  p.activated = gelu(p.expanded);         // (..., 4 * emb_dim)
  p.out = linear(fc2, p.activated);       // (..., emb_dim)
  return p;
}

TransformerBlock::TransformerBlock(const GptConfig& cfg, TorchGenerator& gen)
    : att(cfg.emb_dim, cfg.emb_dim, cfg.drop_rate_attn, cfg.n_heads, cfg.qkv_bias, gen),
      ff(cfg.emb_dim, gen),
      norm1(cfg.emb_dim),
      norm2(cfg.emb_dim),
      drop_shortcut(cfg.drop_rate_shortcut) {}

TransformerBlock::Pass TransformerBlock::pass(const Tensor3& x, const ForwardMode& mode) const {
  Pass p;
  p.norm1 = to3(norm1.forward(AnyTensor(x)));  // (b, n, emb_dim)
  // In eval mode the attention's dropout is off: this generator is never read, and made once per thread
  // rather than seeded again for every block of every forward.
  static thread_local TorchGenerator unused(0);
  p.att = att.attend(p.norm1, mode.training() ? *mode.gen : unused, mode.rng, mode.training() ? att.dropout : 0.0);
  p.att_dropped = drop(p.att.context_vecs, drop_shortcut, mode);  // (b, n, emb_dim)
  p.first_shortcut = p.att_dropped + x;                            // (b, n, emb_dim): x = x + shortcut
  p.norm2 = to3(norm2.forward(AnyTensor(p.first_shortcut)));       // (b, n, emb_dim)
  p.ff = ff.pass(AnyTensor(p.norm2));
  p.ff_dropped = drop(to3(p.ff.out), drop_shortcut, mode);  // (b, n, emb_dim)
  p.out = p.ff_dropped + p.first_shortcut;                  // (b, n, emb_dim)
  return p;
}

Tensor3 TransformerBlock::forward(const Tensor3& x, const ForwardMode& mode) const { return pass(x, mode).out; }

std::size_t TransformerBlock::num_parameters() const {
  return att.num_parameters() + ff.num_parameters() + norm1.num_parameters() + norm2.num_parameters();
}

Matrix embedding_weight(std::size_t num, std::size_t dim, TorchGenerator& gen) {
  Matrix w = xt::empty<float>({num, dim});  // (num, dim)
  gen.normal(w.data(), w.size());
  return w;
}

namespace {

std::vector<TransformerBlock> make_blocks(const GptConfig& cfg, TorchGenerator& gen) {
  std::vector<TransformerBlock> blocks;
  blocks.reserve(cfg.n_layers);
  for (std::size_t i = 0; i < cfg.n_layers; ++i) {
    check_cancelled();  // attn serve's time limit and stop, between blocks (each about 7M draws at 768)
    blocks.emplace_back(cfg, gen);
  }
  return blocks;
}

}  // namespace

// The members are drawn in their declaration order, the book's __init__ order: tok_emb, pos_emb, the blocks
// (each its attention, then its feed-forward), final_norm (no draws) and out_head.
GPTModel::GPTModel(const GptConfig& config, TorchGenerator& gen)
    : cfg(config),
      tok_emb(embedding_weight(config.vocab_size, config.emb_dim, gen)),
      pos_emb(embedding_weight(config.context_length, config.emb_dim, gen)),
      trf_blocks(make_blocks(config, gen)),
      final_norm(config.emb_dim),
      out_head(config.emb_dim, config.vocab_size, /*bias=*/false, gen) {}

GPTModel::Pass GPTModel::pass(const std::vector<std::vector<std::int64_t>>& in_idx, const ForwardMode& mode) const {
  Pass p;
  embed(tok_emb, pos_emb, in_idx, p.tok_embeds, p.pos_embeds, p.x);
  p.x_dropped = drop(p.x, cfg.drop_rate_emb, mode);  // (b, n, emb_dim)
  const Tensor3* x = &p.x_dropped;
  p.block_outs.reserve(trf_blocks.size());
  for (const TransformerBlock& block : trf_blocks) {
    check_cancelled();  // attn serve's time limit and stop, between blocks
    p.block_outs.push_back(block.forward(*x, mode));  // (b, n, emb_dim)
    x = &p.block_outs.back();
  }
  p.final_norm = to3(final_norm.forward(AnyTensor(*x)));  // (b, n, emb_dim)
  p.logits = out_head.forward(p.final_norm);              // (b, n, vocab_size)
  return p;
}

Tensor3 GPTModel::forward(const std::vector<std::vector<std::int64_t>>& in_idx, const ForwardMode& mode) const {
  return pass(in_idx, mode).logits;
}

std::size_t GPTModel::num_parameters() const {
  std::size_t total = tok_emb.size() + pos_emb.size() + final_norm.num_parameters() + out_head.num_parameters();
  for (const TransformerBlock& block : trf_blocks) total += block.num_parameters();
  return total;
}

DummyGPTModel::DummyGPTModel(const GptConfig& config, TorchGenerator& gen)
    : cfg(config),
      tok_emb(embedding_weight(config.vocab_size, config.emb_dim, gen)),
      pos_emb(embedding_weight(config.context_length, config.emb_dim, gen)),
      out_head(config.emb_dim, config.vocab_size, /*bias=*/false, gen) {}

DummyGPTModel::Pass DummyGPTModel::pass(const std::vector<std::vector<std::int64_t>>& in_idx,
                                        const ForwardMode& mode) const {
  Pass p;
  embed(tok_emb, pos_emb, in_idx, p.tok_embeds, p.pos_embeds, p.x);
  p.x_dropped = drop(p.x, cfg.drop_rate_emb, mode);  // (b, n, emb_dim): the blocks and the norm pass it on
  p.logits = out_head.forward(p.x_dropped);          // (b, n, vocab_size)
  return p;
}

ExampleDeepNeuralNetwork::ExampleDeepNeuralNetwork(const std::vector<std::size_t>& layer_sizes, bool shortcut,
                                                   TorchGenerator& gen)
    : use_shortcut(shortcut) {
  for (std::size_t i = 0; i + 1 < layer_sizes.size(); ++i)
    layers.emplace_back(layer_sizes[i], layer_sizes[i + 1], /*bias=*/true, gen);
}

namespace {

// One layer's forward, kept for the backward: its input, z = x W^T + b, and gelu(z) with the
// intermediates GELU's backward reads (torch.tanh's output e).
struct LayerTape {
  Matrix x, z, e, out;
  bool shortcut = false;  // x + out was the next input
};

}  // namespace

ExampleDeepNeuralNetwork::Gradients ExampleDeepNeuralNetwork::gradients(const Matrix& input) const {
  const float k = std::sqrt(static_cast<float>(2.0 / M_PI));  // torch.sqrt(torch.tensor(2.0 / torch.pi))
  std::vector<LayerTape> tape;
  Matrix x = input;  // (1, layer_sizes[0])
  for (const Linear& layer : layers) {
    LayerTape t;
    t.x = x;
    t.z = layer.forward(x);  // (1, out)
    t.e = t.z;  // (1, out): torch.tanh(sqrt(2 / pi) * (z + 0.044715 * z^3)), as gelu computes it
    for (float& v : t.e) v = torch_tanh(k * (v + 0.044715f * (v * v * v)));
    t.out = gelu(t.z);  // (1, out)
    t.shortcut = use_shortcut && t.x.shape() == t.out.shape();
    x = t.shortcut ? Matrix(t.x + t.out) : t.out;
    tape.push_back(std::move(t));
  }
  Gradients g;
  g.output = x;
  const Matrix squared = x * x;  // (output - target) ** 2, target zeros
  g.loss = sum_of(squared.data(), squared.size()) / static_cast<float>(squared.size());
  // nn.MSELoss()(output, zeros).backward(): (output - target) * (2 / numel) * 1.
  const float norm = static_cast<float>(2.0 / static_cast<double>(x.size()));
  Matrix grad = x * norm;  // (1, out): d loss / d output
  g.weight_grads.resize(layers.size());
  g.bias_grads.resize(layers.size());
  g.grad_means.resize(layers.size());
  for (std::size_t i = layers.size(); i-- > 0;) {
    const LayerTape& t = tape[i];
    const Matrix grad_out = grad;  // d loss / d gelu(z)
    Matrix grad_z = xt::empty<float>(t.z.shape());
    for (std::size_t j = 0; j < t.z.size(); ++j) {
      const float z = t.z.data()[j], e = t.e.data()[j], gh = grad_out.data()[j];
      const float f = 1.0f + e, half_z = 0.5f * z;
      const float grad_half = (gh * f) * 0.5f;
      const float grad_inner = ((gh * half_z) * (1.0f - e * e)) * k;
      const float grad_pow = (grad_inner * 0.044715f) * (3.0f * (z * z));
      grad_z.data()[j] = (grad_inner + grad_pow) + grad_half;
    }
    const Linear& layer = layers[i];
    // addmm's backward: weight.grad = (x^T @ grad_z)^T, bias.grad = grad_z summed over the batch, and the
    // input's gradient grad_z @ weight.
    g.weight_grads[i] = xt::transpose(matmul(xt::transpose(t.x), grad_z));
    g.bias_grads[i] = xt::sum(grad_z, {0});
    Matrix grad_x = matmul(grad_z, layer.weight);  // (1, in)
    if (t.shortcut) grad_x = grad_out + grad_x;     // the shortcut's gradient, then the layer's
    grad = grad_x;
    Matrix magnitudes = xt::abs(g.weight_grads[i]);
    g.grad_means[i] = sum_of(magnitudes.data(), magnitudes.size()) / static_cast<float>(magnitudes.size());
  }
  return g;
}

}  // namespace attn
